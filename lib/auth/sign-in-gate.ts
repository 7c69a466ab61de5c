import { verifyAltcha } from "@/lib/captcha/altcha";
import type { ClientAddress } from "@/lib/http/client-address";
import type { LimitResult } from "@/lib/rate-limit/limiter";
import { busy, captchaInvalid, locked, rateLimited } from "@/lib/http/refusals";
import { isHashBudgetFull } from "@/lib/password/hash-budget";
import type { SignInInput } from "./credentials";
import type { Gatehouse } from "./gatehouse";

export type Admission<T> = { ok: true; value: T } | { ok: false; response: Response };

/**
 * The cheap layers of a password sign-in, in order, shared by the browser sign-in and the token
 * endpoint: per-address limit (before the body is read), then the body, then the per-username
 * limit, the ALTCHA proof of work and the lockout. Argon2id comes after, in the caller.
 */
export async function admitSignIn(
  gate: Gatehouse,
  client: ClientAddress,
  readInput: () => Promise<Admission<SignInInput>>,
  // API clients also get the RateLimit-Policy / RateLimit fields on a 429.
  refuseLimited: (result: LimitResult) => Response = rateLimited,
): Promise<Admission<SignInInput>> {
  const byAddress = await gate.limiter.consume("signInAddress", [client.key]);
  if (!byAddress.allowed) return { ok: false, response: refuseLimited(byAddress) };

  const input = await readInput();
  if (!input.ok) return input;

  const byUsername = await gate.limiter.consume("signInUsername", [client.key, input.value.email]);
  if (!byUsername.allowed) return { ok: false, response: refuseLimited(byUsername) };

  const captcha = await verifyAltcha(input.value.altcha, gate.altcha, gate.replays, gate.clock());
  if (!captcha.ok) return { ok: false, response: captchaInvalid(captcha) };

  const lockout = await gate.lockouts.check(gate.usernameKey(input.value.email), gate.clock());
  if (lockout.locked) return { ok: false, response: locked(lockout) };

  return input;
}

/** Runs Argon2id work inside the hash budget; a full budget answers 503 at once. */
export async function withinHashBudget(gate: Gatehouse, work: () => Promise<Response>): Promise<Response> {
  try {
    return await gate.hashBudget.run(work);
  } catch (error) {
    if (isHashBudgetFull(error)) return busy();
    throw error;
  }
}
