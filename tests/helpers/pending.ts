import type { ParsedMail } from "mailparser";
import { NextRequest } from "next/server";
import { expect } from "vitest";
import { freshAddress, PEER_HEADER } from "./peer";
import { recipientOf } from "./smtp";

type Gate = import("@/lib/app").Gatehouse;

/** The pending sign-in cookie (`name=value`) a password step set, or null. */
export function pendingCookieOf(res: Response): string | null {
  return (
    res.headers
      .getSetCookie()
      .find((cookie) => /gatehouse-pending-sign-in=[A-Za-z0-9_-]{43}/.test(cookie))
      ?.split(";")[0] ?? null
  );
}

/** A code that is surely not `code`: the next one. */
export const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** A POST from this app's own page to a second-step route, with the browser's pending sign-in cookie. */
export function secondStepPost(
  pendingCookie: string | null,
  body: unknown,
  path = "/api/auth/second-step",
  headers: Record<string, string> = {},
) {
  return import(`@/app${path}/route`).then((route: { POST: (request: Request) => Promise<Response> }) =>
    route.POST(
      new NextRequest(`http://localhost${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "sec-fetch-site": "same-origin",
          [PEER_HEADER]: freshAddress(),
          ...(pendingCookie ? { cookie: pendingCookie } : {}),
          ...headers,
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    ),
  );
}

/** The device-code mails a test mailbox received, once the instance sent what it had queued. */
export function deviceCodeMails(gate: () => Gate, received: () => ParsedMail[]) {
  async function codeMails(email: string): Promise<ParsedMail[]> {
    await gate().background.idle();
    await gate().mailer.idle();
    return received().filter((mail) => recipientOf(mail) === email && /sign in to .* on a new device/i.test(mail.subject ?? ""));
  }
  /** The code in the newest code mail to `email`. */
  async function mailedCode(email: string): Promise<string> {
    const mails = await codeMails(email);
    expect(mails.length, `a code mail to ${email}`).toBeGreaterThan(0);
    const code = /enter this code: (\d{6})/.exec(mails.at(-1)!.text ?? "")?.[1];
    expect(code).toMatch(/^\d{6}$/);
    return code!;
  }
  return { codeMails, mailedCode };
}
