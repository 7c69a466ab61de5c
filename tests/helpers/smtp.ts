import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { freePort } from "./ports";

export type SmtpReply = "accept" | { code: number; message: string } | { delayMs: number };

/**
 * A real SMTP server on loopback (no TLS, no auth) that parses what it receives with mailparser.
 * `reply(n)` decides the fate of the n-th message (from 0); `rejectRecipients` refuses every
 * RCPT TO, echoing the address as real relays do.
 */
export async function startSmtp(
  port: number,
  reply: (n: number) => SmtpReply = () => "accept",
  options: { rejectRecipients?: boolean } = {},
) {
  const received: ParsedMail[] = [];
  let seen = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    closeTimeout: 100,
    onRcptTo(address, _session, callback) {
      if (options.rejectRecipients)
        return callback(Object.assign(new Error(`<${address.address}>: Recipient address rejected`), { responseCode: 550 }));
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const decision = reply(seen++);
        if (decision === "accept") {
          simpleParser(Buffer.concat(chunks)).then(
            (parsed) => {
              received.push(parsed);
              callback();
            },
            (error: Error) => callback(error),
          );
        } else if ("code" in decision) {
          callback(Object.assign(new Error(decision.message), { responseCode: decision.code }));
        } else {
          setTimeout(() => callback(), decision.delayMs);
        }
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return { received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * An SMTP server for a test instance to deliver to: on `port` (a free one when not given), with
 * the settings that point an instance at it and retry a refused delivery quickly.
 */
export async function startMailbox(port?: number) {
  const smtpPort = port ?? (await freePort());
  const server = await startSmtp(smtpPort);
  return { ...server, port: smtpPort, settings: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_RETRY_BASE_MS: "50" } };
}

/** The recipient of a parsed message. */
export function recipientOf(mail: ParsedMail): string {
  const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
  return to?.value[0]?.address ?? "";
}

/** The single-use token in a message's link (`…#token=<43 characters>`), or null. */
export function linkTokenOf(mail: ParsedMail): string | null {
  return /#token=([A-Za-z0-9_-]{43})/.exec(mail.text ?? "")?.[1] ?? null;
}
