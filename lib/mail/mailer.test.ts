import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { simpleParser } from "mailparser";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freePort } from "@/tests/helpers/ports";
import { startSmtp, type SmtpReply } from "@/tests/helpers/smtp";
import {
  createMailer,
  describeMailError,
  outboxOnlyNotice,
  messageIdOf,
  retryDelayMs,
  type MailerOptions,
  type MailOutcome,
  type MailSpool,
  type SpooledMail,
} from "./mailer";
import { readOutbox } from "./outbox";
import type { MailMessage, Mailer } from "./types";

const RECIPIENT = "alice.owner@example.test";
const LINK = "http://localhost:3000/verify?token=SINGLE-USE-TOKEN-0123456789";

v8.setFlagsFromString("--expose-gc");
/** A full garbage collection, without starting vitest with --expose-gc. */
const collectGarbage = vm.runInNewContext("gc") as () => void;

function message(subject = "Confirm your email", kind = "verify_email"): MailMessage {
  return {
    to: RECIPIENT,
    subject,
    kind,
    text: `Open ${LINK} to confirm.`,
    html: `<p><a href="${LINK}">Confirm</a></p>`,
    links: [{ label: "Confirm", url: LINK }],
  };
}

/** Every log call, to assert on events and on what they must never hold. */
function capture() {
  const entries: ({ level: string } & Record<string, unknown>)[] = [];
  const at = (level: string) => (entry: object) => entries.push({ level, ...entry });
  const counts: Record<string, number> = {};
  const metrics = {
    mailQueueDepth: { set: vi.fn<(value: number) => void>() },
    mailSent: {
      inc: (labels: { kind: string; outcome: MailOutcome }) =>
        void (counts[`${labels.kind}:${labels.outcome}`] = (counts[`${labels.kind}:${labels.outcome}`] ?? 0) + 1),
    },
  };
  const events = (name: string) => entries.filter((entry) => entry.event === name);
  return { entries, events, counts, metrics, log: { info: at("info"), warn: at("warn"), error: at("error") } };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function mailer(
  options: Partial<MailerOptions>,
  deps: ReturnType<typeof capture>,
  spool?: MailSpool,
  onIntent?: (id: string, intent: unknown) => void,
): Mailer {
  const created = createMailer(
    {
      from: "Gatehouse <no-reply@gatehouse.test>",
      outboxDir: "",
      queueMax: 100,
      maxAttempts: 10,
      retryBaseMs: 50,
      retryMaxMs: 200,
      sendTimeoutMs: 2_000,
      ...options,
    },
    { log: deps.log, metrics: deps.metrics, spool, onIntent },
  );
  cleanups.push(() => created.close(200));
  return created;
}

function expectNoSecrets(entries: object[]): void {
  const logged = JSON.stringify(entries);
  expect(logged).not.toContain(RECIPIENT);
  expect(logged).not.toContain("SINGLE-USE-TOKEN");
}

/**
 * The spool in memory: rows by id, none leased; `retrying` keeps the count (and says so in
 * `renewals`); `renew` says which rows it was asked to keep in `leases`, every 50 ms; `settled`
 * deletes the row, then awaits `answer`.
 */
function memorySpool(answer: () => Promise<void> = async () => {}) {
  const rows = new Map<string, SpooledMail>();
  const intents = new Map<string, unknown>();
  const renewals: Array<{ id: string; attempts: number }> = [];
  const leases: string[][] = [];
  const spool: MailSpool = {
    save: async (mail) => void mail.forEach((item) => rows.set(item.id, item)),
    claim: async (limit) => [...[...intents].map(([id, intent]) => ({ id, intent, attempts: 0 })), ...rows.values()].slice(0, limit),
    hold: async (id, _kind, intent) => void intents.set(id, intent),
    rendered: async (id, message) => {
      intents.delete(id);
      rows.set(id, { id, message, attempts: 0 });
    },
    handBack: async () => {},
    takeOverEveryMs: 60_000,
    retrying: async (id, attempts) => {
      renewals.push({ id, attempts });
      const row = rows.get(id);
      if (row) rows.set(id, { ...row, attempts });
    },
    renew: async (ids) => void leases.push([...ids].sort()),
    renewEveryMs: 50,
    settled: (id) => {
      rows.delete(id);
      intents.delete(id);
      return answer();
    },
  };
  return { rows, intents, renewals, leases, spool };
}

async function smtp(reply?: (n: number) => SmtpReply, options?: { rejectRecipients?: boolean }) {
  const port = await freePort();
  const server = await startSmtp(port, reply, options);
  cleanups.push(server.close);
  return { port, server };
}

describe("retryDelayMs", () => {
  it("doubles from the base up to the cap, less at most 10 % jitter", () => {
    const policy = { retryBaseMs: 2_000, retryMaxMs: 300_000 };
    expect([1, 2, 3, 8, 20].map((n) => retryDelayMs(n, policy, 0))).toEqual([2_000, 4_000, 8_000, 256_000, 300_000]);
    expect(retryDelayMs(1, policy, 0.999)).toBeGreaterThanOrEqual(1_800);
    expect(retryDelayMs(20, policy, 0.5)).toBe(285_000);
  });
});

describe("describeMailError", () => {
  it("keeps the codes and cuts addresses and URLs out of the message", () => {
    const error = Object.assign(new Error(`Can't send mail - all recipients were rejected: 550 <${RECIPIENT}>: no such user (${LINK})`), {
      code: "EENVELOPE",
      responseCode: 550,
      command: `RCPT TO:<${RECIPIENT}>`,
    });
    const described = describeMailError(error);
    expect(described).toMatchObject({ code: "EENVELOPE", responseCode: 550, command: "RCPT TO" });
    expectNoSecrets([described]);
  });
});

describe("createMailer over SMTP", () => {
  it("delivers the text and HTML alternatives from MAIL_FROM, without blocking send()", async () => {
    const log = capture();
    const { port, server } = await smtp();
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}` }, log);
    expect(mail.send(message())).toBeUndefined();
    expect(mail.depth()).toBe(1);
    await mail.idle();
    expect(server.received).toHaveLength(1);
    const [parsed] = server.received;
    expect(parsed?.subject).toBe("Confirm your email");
    expect(parsed?.from?.value[0]?.address).toBe("no-reply@gatehouse.test");
    expect(parsed?.text?.trim()).toBe(`Open ${LINK} to confirm.`);
    expect(parsed?.html).toContain(`href="${LINK}"`);
    expect(parsed?.headers.get("auto-submitted")).toBe("auto-generated");
    expect(log.events("mail_sent")).toEqual([{ level: "info", event: "mail_sent", kind: "verify_email", attempt: 1, transport: "smtp" }]);
    expect(log.counts).toEqual({ "verify_email:sent": 1 });
    expect(log.metrics.mailQueueDepth.set).toHaveBeenLastCalledWith(0);
    expectNoSecrets(log.entries);
  });

  it("holds messages through an SMTP outage and delivers each exactly once when the server is back", async () => {
    const log = capture();
    const port = await freePort();
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}` }, log);
    for (const subject of ["one", "two", "three"]) mail.send(message(subject));
    expect(mail.depth()).toBe(3);
    await vi.waitFor(() => expect(log.events("mail_retry").length).toBeGreaterThanOrEqual(3));
    expect(log.events("mail_retry")[0]).toMatchObject({ level: "warn", kind: "verify_email", attempt: 1, code: expect.any(String) });

    const server = await startSmtp(port);
    cleanups.push(server.close);
    await mail.idle();
    expect(server.received.map((parsed) => parsed.subject).sort()).toEqual(["one", "three", "two"]);
    expect(log.events("mail_failed")).toEqual([]);
    expect(log.counts).toEqual({ "verify_email:sent": 3 });
    expectNoSecrets(log.entries);
  });

  it("retries a message the server deferred with a 4xx reply", async () => {
    const log = capture();
    const { port, server } = await smtp((n) => (n === 0 ? { code: 451, message: "Try again later" } : "accept"));
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}` }, log);
    mail.send(message());
    await mail.idle();
    expect(server.received).toHaveLength(1);
    expect(log.events("mail_retry")).toMatchObject([{ attempt: 1, responseCode: 451 }]);
    expect(log.events("mail_sent")).toMatchObject([{ attempt: 2 }]);
  });

  it("gives up on a server slower than sendTimeoutMs and tries again, even after a garbage collection", async () => {
    const log = capture();
    // A collection while the first attempt waits: Node 20 lets AbortSignal.any drop a
    // AbortSignal.timeout it holds (nodejs/node#57736), and the deadline then never comes.
    const { port, server } = await smtp((n) => (n === 0 ? (setImmediate(collectGarbage), { delayMs: 1_000 }) : "accept"));
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}`, sendTimeoutMs: 300 }, log);
    mail.send(message());
    await mail.idle();
    expect(server.received).toHaveLength(1);
    expect(log.events("mail_retry")).toMatchObject([{ attempt: 1 }]);
    expect(log.events("mail_sent")).toMatchObject([{ attempt: 2 }]);
  });

  it("logs mail_failed after the last attempt, with the kind and the reply code but never the address", async () => {
    const log = capture();
    const { port, server } = await smtp(undefined, { rejectRecipients: true });
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}`, maxAttempts: 2 }, log);
    mail.send(message("Reset your password", "password_reset"));
    await mail.idle();
    expect(server.received).toHaveLength(0);
    expect(log.events("mail_failed")).toMatchObject([{ level: "error", kind: "password_reset", attempt: 2, responseCode: 550 }]);
    expect(log.counts).toEqual({ "password_reset:failed": 1 });
    expectNoSecrets(log.entries);
  });

  it("holds a promise in the spool until it is a message, sends that with the row's Message-ID, then deletes the row", async () => {
    const { rows, intents, spool } = memorySpool();
    const accepting = await smtp();
    const sending = mailer({ smtpUrl: `smtp://127.0.0.1:${accepting.port}` }, capture(), spool);
    const heldId = await sending.hold("password_reset", { do: "password_reset", email: RECIPIENT });
    expect(heldId).not.toBeNull();
    expect([...intents.keys()]).toEqual([heldId]);
    sending.send(message("Reset your password", "password_reset"), heldId!);
    await sending.idle();
    expect(accepting.server.received.map((mail) => mail.messageId)).toEqual([messageIdOf(heldId!, "no-reply@gatehouse.test")]);
    await vi.waitFor(() => expect([...rows.keys(), ...intents.keys()]).toEqual([]));
    // A promise that sends nothing after all (no such account) leaves no row.
    const nothing = await sending.hold("password_reset", { do: "password_reset", email: "nobody@example.com" });
    sending.release(nothing!, "done");
    await vi.waitFor(() => expect([...intents.keys()]).toEqual([]));
  });

  it("hands a promise a killed process left to onIntent, and sends a message it left with its own Message-ID", async () => {
    const { intents, spool } = memorySpool();
    const accepting = await smtp();
    intents.set("promise-left", { do: "password_reset", email: RECIPIENT });
    await spool.save([{ id: "message-left", message: message(), attempts: 1 }]);
    const kept: Array<[string, unknown]> = [];
    const sending = mailer({ smtpUrl: `smtp://127.0.0.1:${accepting.port}` }, capture(), spool, (id, intent) => kept.push([id, intent]));
    expect(await sending.resume()).toBe(2);
    await sending.idle();
    expect(kept).toEqual([["promise-left", { do: "password_reset", email: RECIPIENT }]]);
    expect(accepting.server.received.map((mail) => mail.messageId)).toEqual(["<message-left@gatehouse.test>"]);
  });

  it("gives up a message whose attempts a killed process spent, so a relay that answers late gets at most maxAttempts copies", async () => {
    const { rows, spool } = memorySpool();
    const accepting = await smtp();
    const log = capture();
    // The process that made the last attempt died before the relay answered: its count was written first.
    await spool.save([{ id: "spent", message: message("Reset your password", "password_reset"), attempts: 3 }]);
    const sending = mailer({ smtpUrl: `smtp://127.0.0.1:${accepting.port}`, maxAttempts: 3 }, log, spool);
    await sending.resume();
    await sending.idle();
    await vi.waitFor(() => expect([...rows.keys()]).toEqual([]));
    expect(accepting.server.received).toHaveLength(0);
    expect(log.events("mail_failed")).toMatchObject([{ kind: "password_reset", attempt: 3, reason: "attempts_spent" }]);
  });

  it("deletes a resumed message's spool row once it is delivered, and once its last attempt fails", async () => {
    const { rows, spool } = memorySpool();
    const accepting = await smtp();
    await spool.save([{ id: "spooled-sent", message: message("Confirm your email"), attempts: 1 }]);
    const sending = mailer({ smtpUrl: `smtp://127.0.0.1:${accepting.port}` }, capture(), spool);
    expect(await sending.resume()).toBe(1);
    await sending.idle();
    expect(accepting.server.received).toHaveLength(1);
    expect([...rows.keys()]).toEqual([]);

    // One attempt left of MAIL_MAX_ATTEMPTS: a refusal spends it, and no later start sends it again.
    const log = capture();
    const refusing = await smtp(undefined, { rejectRecipients: true });
    await spool.save([{ id: "spooled-failed", message: message("Reset your password", "password_reset"), attempts: 1 }]);
    const failing = mailer({ smtpUrl: `smtp://127.0.0.1:${refusing.port}`, maxAttempts: 2 }, log, spool);
    expect(await failing.resume()).toBe(1);
    await failing.idle();
    expect(log.events("mail_failed")).toMatchObject([{ kind: "password_reset", attempt: 2, responseCode: 550 }]);
    expect([...rows.keys()]).toEqual([]);
  });

  it("keeps a resumed message's count and lease at each failed attempt, so a killed process hands them on", async () => {
    const { rows, renewals, spool } = memorySpool();
    const refusing = await smtp(undefined, { rejectRecipients: true });
    await spool.save([{ id: "spooled-retrying", message: message(), attempts: 1 }]);
    // A long backoff: the message waits for its next attempt, as it would through a relay outage.
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${refusing.port}`, retryBaseMs: 60_000, retryMaxMs: 60_000 }, capture(), spool);
    expect(await mail.resume()).toBe(1);
    await vi.waitFor(() => expect(renewals).toEqual([{ id: "spooled-retrying", attempts: 2 }]));
    expect(rows.get("spooled-retrying")?.attempts).toBe(2);
  });

  it("renews the leases of every spooled message it holds while they wait, and stops at close()", async () => {
    const { leases, spool } = memorySpool();
    // Nobody listens: every attempt fails at once, then waits out a long backoff.
    const port = await freePort();
    await spool.save(["one", "two", "three"].map((id) => ({ id, message: message(), attempts: 0 })));
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}`, retryBaseMs: 60_000, retryMaxMs: 60_000, concurrency: 1 }, capture(), spool);
    expect(await mail.resume()).toBe(3);
    await vi.waitFor(() => expect(leases.length).toBeGreaterThanOrEqual(2));
    expect(leases.at(-1)).toEqual(["one", "three", "two"]);
    await mail.close(50);
    const renewed = leases.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(leases).toHaveLength(renewed);
  });

  it("does not spool again a delivered message whose row is still being deleted when close() comes", async () => {
    let acknowledge: (() => void) | undefined;
    // The delete commits at once; its answer is slow (a busy database at shutdown).
    const { rows, spool } = memorySpool(() => new Promise<void>((resolve) => (acknowledge = resolve)));
    const { port, server } = await smtp();
    await spool.save([{ id: "spooled-sent", message: message(), attempts: 1 }]);
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}` }, capture(), spool);
    expect(await mail.resume()).toBe(1);
    await vi.waitFor(() => expect(acknowledge).toBeDefined());
    const closed = mail.close(50);
    await new Promise((resolve) => setTimeout(resolve, 150));
    acknowledge!();
    await closed;
    expect(server.received).toHaveLength(1);
    // Spooled again, the next start would send it twice.
    expect([...rows.keys()]).toEqual([]);
  });

  it("close() delivers nothing more after its deadline, says how many were left, and drops later sends", async () => {
    const log = capture();
    const port = await freePort();
    const mail = mailer({ smtpUrl: `smtp://127.0.0.1:${port}`, retryBaseMs: 10_000, retryMaxMs: 10_000 }, log);
    mail.send(message("one"));
    mail.send(message("two"));
    await mail.close(300);
    expect(log.events("mail_closed")).toEqual([{ level: "error", event: "mail_closed", undelivered: 2 }]);
    mail.send(message("three"));
    expect(log.events("mail_dropped")).toMatchObject([{ kind: "verify_email", reason: "closed" }]);
    expect(mail.depth()).toBe(0);
  });
});

describe("createMailer without SMTP_URL (the outbox)", () => {
  async function outboxDir(): Promise<string> {
    const root = await mkdtemp(path.join(os.tmpdir(), "gatehouse-outbox-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    return path.join(root, "outbox");
  }

  it("writes a parseable .eml and a JSON sidecar, owner-only, that readOutbox lists", async () => {
    const log = capture();
    const dir = await outboxDir();
    const mail = mailer({ outboxDir: dir, sendTimeoutMs: 2_000 }, log);
    mail.send(message());
    await mail.idle();
    const files = (await readdir(dir)).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[0-9a-f]{12}\.eml$/);
    expect(files[1]).toBe(files[0]?.replace(/\.eml$/, ".json"));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const file of files) expect((await stat(path.join(dir, file))).mode & 0o777).toBe(0o600);

    const parsed = await simpleParser(await readFile(path.join(dir, files[0] as string)));
    expect(parsed.subject).toBe("Confirm your email");
    expect(parsed.text?.trim()).toBe(`Open ${LINK} to confirm.`);
    expect(parsed.html).toContain(`href="${LINK}"`);
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value[0]?.address : undefined).toBe(RECIPIENT);

    const [entry] = await readOutbox(dir, 10);
    expect(entry).toMatchObject({
      to: RECIPIENT,
      subject: "Confirm your email",
      kind: "verify_email",
      links: [{ label: "Confirm", url: LINK }],
      id: files[0]?.slice(0, -4),
    });
    expect(log.events("mail_sent")).toMatchObject([{ transport: "outbox" }]);
    expectNoSecrets(log.entries);
  });

  it("readOutbox lists newest first and skips files that are not well-formed messages", async () => {
    const dir = await outboxDir();
    const log = capture();
    let nowMs = Date.parse("2026-01-01T00:00:00Z");
    const mail = createMailer(
      {
        from: "Gatehouse <no-reply@gatehouse.test>",
        outboxDir: dir,
        queueMax: 10,
        maxAttempts: 1,
        retryBaseMs: 10,
        sendTimeoutMs: 2_000,
        concurrency: 1,
      },
      { log: log.log, clock: () => (nowMs += 1_000) },
    );
    for (const subject of ["first", "second"]) mail.send(message(subject));
    await mail.idle();
    await writeFile(path.join(dir, "9999-broken.json"), "{ not json");
    await writeFile(
      path.join(dir, "9999-script.json"),
      JSON.stringify({ ...message(), links: [{ label: "x", url: "javascript:alert(1)" }], sentAt: new Date().toISOString() }),
    );
    expect((await readOutbox(dir, 10)).map((entry) => entry.subject)).toEqual(["second", "first"]);
    expect(await readOutbox(dir, 1)).toHaveLength(1);
    expect(await readOutbox(path.join(dir, "missing"), 10)).toEqual([]);
  });

  it("drops past queueMax, logging and counting each drop by kind", async () => {
    const log = capture();
    const dir = await outboxDir();
    const mail = mailer({ outboxDir: dir, queueMax: 2 }, log);
    for (let n = 0; n < 4; n++) mail.send(message(`message ${n}`, "lockout_notice"));
    expect(mail.depth()).toBe(2);
    expect(log.events("mail_dropped")).toEqual([
      { level: "error", event: "mail_dropped", kind: "lockout_notice", reason: "queue_full", queueMax: 2 },
      { level: "error", event: "mail_dropped", kind: "lockout_notice", reason: "queue_full", queueMax: 2 },
    ]);
    await mail.idle();
    expect(log.counts).toEqual({ "lockout_notice:dropped": 2, "lockout_notice:sent": 2 });
    expect((await readOutbox(dir, 10)).map((entry) => entry.subject).sort()).toEqual(["message 0", "message 1"]);
  });
});

describe("a start whose mail reaches only the outbox (issue 60)", () => {
  const mail = (smtpUrl?: string) => ({ smtpUrl, outboxDir: "/tmp/outbox" }) as never;
  it("is an error in production, information on npm run dev, and nothing in tests or with SMTP_URL", () => {
    expect(outboxOnlyNotice({ nodeEnv: "production", devServer: false, mail: mail() })?.level).toBe("error");
    expect(outboxOnlyNotice({ nodeEnv: "development", devServer: true, mail: mail() })).toEqual({
      level: "info",
      entry: { event: "mail_to_outbox_only", outboxDir: "/tmp/outbox", hint: "read the mail at /dev/outbox" },
    });
    // Whatever NODE_ENV a developer's shell exports, the development server is never an error.
    expect(outboxOnlyNotice({ nodeEnv: "production", devServer: true, mail: mail() })?.level).toBe("info");
    expect(outboxOnlyNotice({ nodeEnv: "test", devServer: false, mail: mail() })).toBeNull();
    expect(outboxOnlyNotice({ nodeEnv: "production", devServer: false, mail: mail("smtps://relay.example") })).toBeNull();
  });
});
