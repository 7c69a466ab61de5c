import { verifyAltcha } from "@/lib/captcha/altcha";
import { prisma } from "@/lib/db/client";
import type { BodyResult } from "@/lib/http/body";
import type { RouteLimits } from "@/lib/http/limited";
import { busy, captchaInvalid, locked } from "@/lib/http/refusals";
import { log } from "@/lib/log/logger";
import { isHashBudgetFull } from "@/lib/password/hash-budget";
import { verifyCredentials } from "@/lib/users/accounts";
import type { PasswordOutcome, SignInAdmission } from "./admission";
import type { SignInInput } from "./credentials";
import type { Gatehouse } from "./gatehouse";

export type Admitted<T> = { ok: true; value: T; admission: SignInAdmission } | { ok: false; response: Response };

/**
 * The cheap layers of a password sign-in, in order, shared by the browser sign-in and the token
 * endpoint. The route's wrapper has already applied the per-address limit (before the body);
 * here come the body, the per-username limit, the ALTCHA proof of work and a first look at the
 * lockout. What passes gets an admission: the only thing checkPassword accepts.
 */
export async function admitSignIn<T extends SignInInput>(limits: RouteLimits, readInput: () => Promise<BodyResult<T>>): Promise<Admitted<T>> {
  const { gate, client } = limits;
  const input = await readInput();
  if (!input.ok) return input;
  const { email, password, altcha } = input.value;

  const byUsername = await limits.limit("addressAndUsername", email);
  if (byUsername) return { ok: false, response: byUsername };

  const captcha = await verifyAltcha(altcha, gate.altcha, gate.replays, gate.clock());
  if (!captcha.ok) return { ok: false, response: captchaInvalid(captcha) };

  // Refuses a locked username before it queues for the hash budget; checkPassword decides again.
  const lockout = await gate.lockouts.check(gate.usernameKey(email), gate.clock());
  if (lockout.locked) return { ok: false, response: locked(lockout) };

  return { ok: true, value: input.value, admission: gate.admissions.issue({ email, password, client }) };
}

/**
 * The one function that runs Argon2id for a sign-in (next-auth's authorize() and the token
 * endpoint both call it). It needs an unused admission from this process's desk; inside a
 * hash-budget slot it admits the attempt against the lockout atomically (counting it before the
 * verification, so parallel guesses cannot all pass a check none has counted yet), then verifies.
 */
export async function checkPassword(gate: Gatehouse, admission: SignInAdmission): Promise<PasswordOutcome> {
  if (!gate.admissions.take(admission)) {
    log().error({ event: "password_check_refused", reason: "no_admission" });
    return { ok: false, refusal: null };
  }
  const { email, password, client } = admission;
  const usernameKey = gate.usernameKey(email);
  return withinHashBudget(
    gate,
    async (): Promise<PasswordOutcome> => {
      const attempt = await gate.lockouts.admitAttempt(usernameKey, gate.clock(), gate.lockoutPolicy);
      if (!attempt.allowed) return { ok: false, refusal: locked(attempt.check) };

      const user = await verifyCredentials(await prisma(), { email, password }, gate.argon2, (error) =>
        log().warn({ event: "password_rehash_failed", err: error instanceof Error ? error.message : String(error) }),
      );
      if (!user) {
        // Already counted by admitAttempt, whether or not the account exists.
        log().info({ event: "sign_in_failed", failureCount: attempt.state.failureCount, locked: attempt.state.lockedUntilMs !== null });
        await gate.events.signInFailed(email, client, attempt.state);
        return { ok: false, refusal: null };
      }
      await gate.lockouts.reset(usernameKey);
      log().info({ event: "sign_in_succeeded", userId: user.id, rehashed: user.rehashed });
      await gate.events.signInSucceeded(user.id, client);
      return { ok: true, user: { id: user.id, email: user.email } };
    },
    () => ({ ok: false, refusal: busy() }),
  );
}

/** Runs Argon2id work inside the hash budget; a full budget answers `whenFull()` at once. */
export async function withinHashBudget<T>(gate: Gatehouse, work: () => Promise<T>, whenFull: () => T): Promise<T> {
  try {
    return await gate.hashBudget.run(work);
  } catch (error) {
    if (isHashBudgetFull(error)) return whenFull();
    throw error;
  }
}
