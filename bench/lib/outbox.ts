import fs from "node:fs";
import path from "node:path";
import { sleep } from "./stats";

/** One message's sidecar (lib/mail/outbox.ts): what the drills read of it. */
export type OutboxMail = { to: string; kind: string; text: string; links: { label: string; url: string }[] };

const WAIT_MS = 20_000;

/** Mail sidecars (lib/mail/outbox.ts) in the server's outbox, read once each. */
export class Outbox {
  private readonly seen = new Map<string, OutboxMail>();
  constructor(private readonly dir: string) {}

  read(): OutboxMail[] {
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.dir).filter((name) => name.endsWith(".json") && !name.startsWith("."));
    } catch {
      // No mail yet: the folder is made with the first one.
    }
    for (const name of names) {
      if (this.seen.has(name)) continue;
      try {
        const entry = JSON.parse(fs.readFileSync(path.join(this.dir, name), "utf8")) as OutboxMail;
        this.seen.set(name, { ...entry, links: entry.links ?? [] });
      } catch {
        // Written through a rename, so whole or absent; skipped if unreadable.
      }
    }
    return [...this.seen.values()];
  }

  /**
   * The newest value `pick` finds in a mail of `kind` to `email` that is not in `used`, waiting
   * for it (mail goes out after the answer) at most `waitMs`.
   */
  async await(
    email: string,
    kind: string,
    used: Set<string>,
    pick: (mail: OutboxMail) => string | undefined,
    waitMs = WAIT_MS,
  ): Promise<string> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = this.read()
        .filter((mail) => mail.to.includes(email) && mail.kind === kind)
        .map(pick)
        .filter((value): value is string => value !== undefined && !used.has(value));
      if (found.length > 0) {
        used.add(found.at(-1)!);
        return found.at(-1)!;
      }
      if (Date.now() > deadline) throw new Error(`no ${kind} mail to ${email} within ${waitMs / 1000} s`);
      await sleep(100);
    }
  }

  /** The newest device code mailed to `email` that is not in `used`, waiting for it. */
  code(email: string, used: Set<string>, waitMs = WAIT_MS): Promise<string> {
    return this.await(email, "device_code", used, (mail) => /enter this code: (\d{6})/.exec(mail.text)?.[1], waitMs);
  }

  /** The device codes mailed to `email` so far, oldest first (sidecar names start with the send time). */
  codesTo(email: string): string[] {
    this.read();
    return [...this.seen.entries()]
      .filter(([, mail]) => mail.to.includes(email) && mail.kind === "device_code")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, mail]) => /enter this code: (\d{6})/.exec(mail.text)?.[1])
      .filter((code): code is string => code !== undefined);
  }

  /**
   * The code a person reads after asking, as a person reads a mailbox: the first code mail to
   * `email` past the `before` it held when they asked; when none comes within `graceMs` (a build
   * that mails one code per window sends none for a window it already mailed), the newest one there.
   */
  async codeAfter(email: string, before: number, graceMs = 3_000, waitMs = WAIT_MS): Promise<string> {
    const started = Date.now();
    for (;;) {
      const codes = this.codesTo(email);
      if (codes.length > before) return codes[before]!;
      if (codes.length > 0 && Date.now() - started > graceMs) return codes.at(-1)!;
      if (Date.now() - started > waitMs) throw new Error(`no device_code mail to ${email} within ${waitMs / 1000} s`);
      await sleep(100);
    }
  }

  /** The token of the newest link of a `kind` mail to `email` (links carry it in the fragment, `#token=`). */
  linkToken(email: string, kind: string, used: Set<string>, waitMs = WAIT_MS): Promise<string> {
    const token = (mail: OutboxMail) => mail.links.map((link) => /#token=([^&\s]+)/.exec(link.url)?.[1]).find(Boolean);
    return this.await(email, kind, used, token, waitMs);
  }

  /** Mails by kind, waiting until no new one has come for `quietMs` (they go out after the answers). */
  async settled(quietMs: number, maxMs: number): Promise<number> {
    const deadline = Date.now() + maxMs;
    let count = this.read().length;
    let quietSince = Date.now();
    while (Date.now() < deadline && Date.now() - quietSince < quietMs) {
      await sleep(100);
      const now = this.read().length;
      if (now !== count) {
        count = now;
        quietSince = Date.now();
      }
    }
    return count;
  }

  kinds(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const mail of this.read()) counts.set(mail.kind, (counts.get(mail.kind) ?? 0) + 1);
    return counts;
  }
}
