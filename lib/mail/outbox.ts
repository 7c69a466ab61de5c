import { mkdir, readFile, readdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";

/**
 * The outbox: with no SMTP server, each message is `<name>.eml` (the RFC 822 message, which any
 * mail client opens) and `<name>.json` (what /dev/outbox lists). Names start with the send time,
 * so they sort oldest first. The files hold live single-use links: the folder is the owner's only.
 */
const outboxEntry = z.object({
  to: z.string(),
  subject: z.string(),
  kind: z.string(),
  // Only web links become anchors on the page (never javascript: or data:).
  links: z.array(z.object({ label: z.string(), url: z.url({ protocol: /^https?$/ }) })),
  text: z.string(),
  sentAt: z.iso.datetime(),
});

export type OutboxEntry = z.infer<typeof outboxEntry>;

/** Writes the message, then its sidecar, each via a temporary file and a rename: a reader sees whole files or none. */
export async function writeOutboxMessage(dir: string, name: string, eml: Buffer, entry: OutboxEntry): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [file, content] of [
    [`${name}.eml`, eml],
    [`${name}.json`, JSON.stringify(entry, null, 2)],
  ] as const) {
    const temporary = path.join(dir, `.${file}.tmp`);
    await writeFile(temporary, content, { mode: 0o600 });
    await rename(temporary, path.join(dir, file));
  }
}

/** The newest `limit` messages, newest first; unreadable or malformed sidecars are skipped. */
export async function readOutbox(dir: string, limit: number): Promise<(OutboxEntry & { id: string })[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const sidecars = names
    .filter((name) => name.endsWith(".json") && !name.startsWith("."))
    .sort()
    .reverse();
  const entries: (OutboxEntry & { id: string })[] = [];
  for (const name of sidecars) {
    if (entries.length >= limit) break;
    try {
      const parsed = outboxEntry.safeParse(JSON.parse(await readFile(path.join(dir, name), "utf8")));
      if (parsed.success) entries.push({ ...parsed.data, id: name.slice(0, -".json".length) });
    } catch {
      // Deleted meanwhile or not JSON: not a message to list.
    }
  }
  return entries;
}
