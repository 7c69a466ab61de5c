import type { NextRequest } from "next/server";
import { cookieJar } from "@/lib/http/cookies";
import { readForm } from "@/lib/http/body";
import { csrfRefused, passwordChangeRequired, unavailable } from "@/lib/http/refusals";
import { accept, refuse, type OrRefused } from "@/lib/http/or-refused";
import { jsonError } from "@/lib/http/responses";
import { carriesFormToken } from "@/lib/http/csrf";
import { liveSessionOfCookies, type LiveSession } from "./browser-session";
import type { Gatehouse } from "@/lib/app";
import { SESSION_ENDED } from "@/lib/ui/messages";
import { messageOf } from "@/lib/log/message";

export type AccountForm = OrRefused<{ session: LiveSession; fields: Record<string, string> }>;

/**
 * The gate of every form on the account page, in order: a request from the app's own pages (the
 * route's wrapper checks it before this), a live browser session (the same check as every route),
 * one parse of the form, and the session's form token. Nothing is changed by a request that fails any of them.
 */
export async function readAccountForm(
  request: NextRequest,
  gate: Gatehouse,
  /** A limit keyed by the user, applied before the body is read. */
  beforeBody: (session: LiveSession) => Promise<Response | null> = async () => null,
  /** The change-password form: the one form an account whose password is breached may still send. */
  { replacesPassword = false }: { replacesPassword?: boolean } = {},
): Promise<AccountForm> {
  let session: LiveSession | null;
  try {
    session = await liveSessionOfCookies(gate, cookieJar(request.cookies));
  } catch (error) {
    gate.log.error({ event: "session_check_failed", err: messageOf(error) });
    gate.dataHealth.failed(error);
    return refuse(unavailable());
  }
  if (!session) return refuse(jsonError(401, "unauthenticated", SESSION_ENDED));
  if (session.passwordChangeRequired && !replacesPassword) return refuse(passwordChangeRequired());
  const refused = await beforeBody(session);
  if (refused) return refuse(refused);
  const form = await readForm(request, gate.config.http.maxBodyBytes);
  if (!form.ok) return form;
  if (!carriesFormToken(gate.config, session.sid, form.value)) return refuse(csrfRefused());
  return accept({ session, fields: form.value });
}

/** Back to the account page with what happened (a plain form post lands there too). */
export function backToAccount(notice: string): Response {
  return new Response(null, {
    status: 303,
    headers: { Location: `/account?notice=${encodeURIComponent(notice)}`, "Cache-Control": "no-store" },
  });
}
