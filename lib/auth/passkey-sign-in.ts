import type { SignInOutcome } from "@/lib/auth/sign-in-outcome";
import { completeSignIn, noticeOrigin } from "@/lib/auth/complete-sign-in";
import { liftsStrangersCap } from "@/lib/lockout/attempt";
import type { RouteLimits } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";
import { logSecurity } from "@/lib/auth/security-log";
import { browserLabel } from "@/lib/sessions/browser-label";
import { newSessionId } from "@/lib/sessions/browser-sessions";
import { counterVerdict } from "@/lib/passkeys/passkey-rules";
import type { CeremonyFailure, ParsedAuthentication } from "@/lib/passkeys/webauthn";
import { parseAuthentication, verifyAuthentication } from "@/lib/passkeys/webauthn";
import { z } from "zod";
import type { Gatehouse } from "@/lib/app";
import { readJson } from "@/lib/http/body";
import { accept, refuse, type OrRefused } from "@/lib/http/or-refused";

const MESSAGES: Record<CeremonyFailure["reason"] | "unknown" | "regressed" | "unconfirmed", string> = {
  malformed: "That passkey answer was not understood. Try again.",
  forged: "That passkey answer was not for this site. Try again.",
  expired: "The passkey request expired. Try again.",
  replayed: "That passkey request was already used. Try again.",
  invalid_response: "The passkey could not be verified here. Try again, or sign in with your password.",
  unknown: "This passkey is not registered here (or was removed). Sign in with your password, then add it on your account page.",
  regressed: "This passkey was refused: the security key may have been copied. Sign in another way.",
  unconfirmed: "Confirm your address first, with the link we emailed you.",
};

export function passkeyRefused(reason: keyof typeof MESSAGES): Response {
  return jsonError(400, "passkey_invalid", MESSAGES[reason], { reason });
}

type Refusable = keyof typeof MESSAGES;

/**
 * One assertion by a stored passkey, checked and spent, for a sign-in or a "Confirm it's you":
 * the credential (of `owner`, when named: another account's key proves nothing) → the signature
 * over a single-use challenge of ours for this purpose and binding → the signature counter (a
 * regression is refused, recorded and mailed: the key may have been copied) → the new count,
 * recorded only if no other use came first.
 */
export async function spendAssertion(
  limits: RouteLimits,
  response: ParsedAuthentication,
  ceremony: { purpose: "sign_in" | "reauthenticate" | "second_step"; boundTo: string; owner?: string },
): Promise<{ ok: true; passkey: { id: string; userId: string; credentialGeneration: number } } | { ok: false; reason: Refusable }> {
  const { gate, client } = limits;
  const nowMs = gate.clock();
  const passkey = await gate.passkeys.find(response.id);
  if (!passkey || (ceremony.owner !== undefined && passkey.userId !== ceremony.owner)) return { ok: false, reason: "unknown" };
  const verified = await verifyAuthentication(gate.passkeySettings, response, passkey, ceremony.purpose, ceremony.boundTo, nowMs);
  if (!verified.ok) return verified;
  if (counterVerdict(passkey.signCount, verified.reportedCount) === "regressed") {
    gate.log.warn({
      event: "passkey_counter_regressed",
      userId: passkey.userId,
      stored: passkey.signCount,
      reported: verified.reportedCount,
    });
    await gate.events.accountChanged(passkey.userId, "passkey_counter_regressed", client, { browser: browserLabel(limits.userAgent) });
    void gate.recovery.notice("passkey_counter_regressed", { id: passkey.userId }, noticeOrigin(gate, limits));
    return { ok: false, reason: "regressed" };
  }
  // Two assertions racing with the same count: one is recorded, the other refused.
  if (!(await gate.passkeys.recordUse(passkey.id, passkey.signCount, verified.reportedCount, nowMs)))
    return { ok: false, reason: "replayed" };
  return { ok: true, passkey };
}

/**
 * A passkey sign-in, top to bottom: the route has applied the per-address limits (the sign-in's
 * and its own) and parsed the body once. Then: the credential → the signature over a single-use
 * challenge of ours, made on our origin for our RP ID with user verification → the signature
 * counter → the session's pieces. No lockout refuses it (strangers' failures cannot touch the
 * owner's key, and NIST's cap ends here as after a known device), no Argon2id runs and no
 * hash-budget slot is taken: the owner's door stays open while the password's is shut.
 */
export async function signInWithPasskey(
  limits: RouteLimits,
  response: ParsedAuthentication,
  deviceToken: string | undefined,
): Promise<Exclude<SignInOutcome, { ok: "second_step" }>> {
  const { gate, client } = limits;
  const refused = (reason: Refusable): Extract<SignInOutcome, { ok: false }> => {
    logSecurity(gate, { route: limits.path, outcome: "sign_in_failed", client, detail: `passkey_${reason}` });
    return { ok: false, refusal: passkeyRefused(reason) };
  };

  const used = await spendAssertion(limits, response, { purpose: "sign_in", boundTo: "" });
  if (!used.ok) return refused(used.reason);
  const { passkey } = used;

  const user = await gate.prisma.user.findUnique({
    where: { id: passkey.userId },
    select: { id: true, email: true, credentialGeneration: true, emailVerifiedAt: true, passwordBreachedAt: true },
  });
  // Held to the credentials as the passkey was found, before its signature was checked: a sign
  // out everywhere, a reset or a change since then (or a deleted account) leaves it no session.
  if (!user || user.credentialGeneration !== passkey.credentialGeneration) return refused("unknown");
  // The same rule as the password's: no session for an address not confirmed yet.
  if (!user.emailVerifiedAt && gate.config.email.requireVerification) return refused("unconfirmed");
  // The passkey proved the owner, but the password is still on a breach list: it is replaced first.
  const finished = await signInPasskeyHolder(limits, { ...user, passwordBreached: user.passwordBreachedAt !== null }, deviceToken);
  // The account changed its credentials (or went) since it was read: as if it were never found.
  if (!finished.ok) return finished.refusal ? finished : refused("unknown");
  return finished;
}

/**
 * The session of whoever holds one of the account's passkeys (one just asserted, or one just made
 * from an emailed link): this browser becomes a known device of the account (a device token it held
 * is replaced), and NIST's cap on the strangers' lock ends here as after a known device.
 * `refusal: null`: the account changed its credentials (or went) since it was read.
 */
export async function signInPasskeyHolder(
  limits: RouteLimits,
  user: { id: string; email: string; credentialGeneration: number; passwordBreached: boolean },
  deviceToken: string | undefined,
): ReturnType<typeof completeSignIn> {
  const { gate, client } = limits;
  const usernameKey = gate.usernameKey(user.email);
  const previous = await gate.devices.recognise(deviceToken, usernameKey, gate.clock());
  const passed = {
    email: user.email,
    client,
    device: previous,
    route: limits.path,
    userAgent: limits.userAgent,
    locale: limits.locale,
    sessionId: newSessionId(),
    intent: { kind: "sign_in", channel: "browser" } as const,
  };
  const strangers = { key: usernameKey, policy: gate.config.lockout };
  return completeSignIn(gate, passed, user, "passkey", liftsStrangersCap(gate.lockouts, strangers));
}

const answerSchema = z.object({ credential: z.unknown(), callbackUrl: z.string().max(2048).optional(), remember: z.boolean().optional() });

/**
 * A passkey answer posted by the sign-in page (a sign-in, or the second step), which the route's
 * wrapper let through from the app's own pages only (no other site may make a browser sign in): one parse of the JSON body, and the assertion
 * parsed and bounded; or the refusal to send.
 */
export async function readPasskeyAnswer(
  request: Request,
  gate: Gatehouse,
): Promise<OrRefused<{ credential: ParsedAuthentication; callbackUrl: string | undefined; remember: boolean }>> {
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body;
  const input = answerSchema.safeParse(body.value);
  if (!input.success) return refuse(jsonError(400, "invalid_input", "Try the passkey again."));
  const credential = parseAuthentication(input.data.credential);
  if (!credential) return refuse(passkeyRefused("malformed"));
  return accept({ credential, callbackUrl: input.data.callbackUrl, remember: input.data.remember === true });
}
