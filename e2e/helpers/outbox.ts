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

async function messages(): Promise<ParsedMail[]> {
  const names = (await fs.readdir(outboxDir()).catch(() => [] as string[])).filter((name) => name.endsWith(".eml")).sort();
  for (const name of names) {
    if (!parsed.has(name)) parsed.set(name, await simpleParser(await fs.readFile(path.join(outboxDir(), name))));
  }
  return names.map((name) => parsed.get(name)!);
}

function recipientOf(mail: ParsedMail): string {
  const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
  return to?.value[0]?.address ?? "";
}

/** The newest message to `email` whose subject matches, waiting for it to be written (mail is sent after the answer). */
export async function mailTo(email: string, subject: RegExp, timeoutMs = 15_000): Promise<ParsedMail & { link: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await messages()).filter((mail) => recipientOf(mail) === email && subject.test(mail.subject ?? "")).at(-1);
    const link = found ? /https?:\/\/\S+#token=[A-Za-z0-9_-]{43}/.exec(found.text ?? "")?.[0] : undefined;
    if (found && (link || !/#token=/.test(found.text ?? ""))) return Object.assign(found, { link: link ?? "" });
    if (Date.now() > deadline) throw new Error(`no message "${subject}" to ${email} in ${outboxDir()}`);
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
