import fs from "node:fs/promises";
import path from "node:path";
import { simpleParser, type ParsedMail } from "mailparser";

/** Where every server in this run writes its mail (playwright.config.ts sets it; no SMTP server). */
export function outboxDir(): string {
  const dir = process.env.E2E_OUTBOX_DIR;
  if (!dir) throw new Error("E2E_OUTBOX_DIR is not set (playwright.config.ts sets it)");
  return dir;
}

const parsed = new Map<string, ParsedMail>();

async function messages(dir = outboxDir()): Promise<ParsedMail[]> {
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith(".eml")).sort();
  for (const name of names) {
    const file = path.join(dir, name);
    if (!parsed.has(file)) parsed.set(file, await simpleParser(await fs.readFile(file)));
  }
  return names.map((name) => parsed.get(path.join(dir, name))!);
}

function recipientOf(mail: ParsedMail): string {
  const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
  return to?.value[0]?.address ?? "";
}

/**
 * The newest message to `email` whose subject matches, waiting for it to be written (mail is sent
 * after the answer), in the run's outbox or in `dir`.
 */
export async function mailTo(
  email: string,
  subject: RegExp,
  timeoutMs = 15_000,
  dir = outboxDir(),
): Promise<ParsedMail & { link: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await messages(dir)).filter((mail) => recipientOf(mail) === email && subject.test(mail.subject ?? "")).at(-1);
    const link = found ? /https?:\/\/\S+#token=[A-Za-z0-9_-]{43}/.exec(found.text ?? "")?.[0] : undefined;
    if (found && (link || !/#token=/.test(found.text ?? ""))) return Object.assign(found, { link: link ?? "" });
    if (Date.now() > deadline) throw new Error(`no message "${subject}" to ${email} in ${dir}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every message to `email` so far. */
export async function mailsTo(email: string): Promise<ParsedMail[]> {
  return (await messages()).filter((mail) => recipientOf(mail) === email);
}

/** The token of an emailed link. */
export function tokenOf(link: string): string {
  return new URL(link).hash.replace(/^#token=/, "");
}
