import { issueChallenge } from "@/lib/captcha/altcha";
import { challengeLevel, levelDue, maxCounterAt } from "@/lib/captcha/difficulty";
import type { Gatehouse } from "@/lib/app";
import type { RouteLimits } from "@/lib/auth/limited";
import { signInWithPassword, type Intent, type SignInOutcome } from "@/lib/auth/sign-in";
import type { ClientAddress } from "@/lib/http/client-address";
import { solve } from "./altcha";

export type PasswordTry = { email: string; password: string; client: ClientAddress; route?: string; intent?: Intent };

/**
 * A password sign-in through its corridor (signInWithPassword: the password check is private to
 * it), for suites about what the check does, on an instance of their own: a fresh ALTCHA solved at
 * the level the corridor will ask of this client, and no route limits (their table has its own
 * suite, tests/integration/route-limits.test.ts), so only the corridor's own layers answer.
 */
export async function passwordCheck(gate: Gatehouse, attempt: PasswordTry): Promise<SignInOutcome> {
  const { client } = attempt;
  const pressure = {
    budgetPressure: gate.hashBudget.recentPressure(),
    addressFailures: gate.addressFailures.get(client.key) ?? 0,
    knownDevice: false,
  };
  const level = challengeLevel(pressure);
  const settings = { ...gate.config.altcha, maxCounter: maxCounterAt(gate.config.altcha.maxCounter, level) };
  const altcha = await solve(await issueChallenge(settings, gate.clock(), level, levelDue(pressure).pressureLevel));
  const limits = {
    gate,
    client,
    path: attempt.route ?? "/api/auth/callback/credentials",
    userAgent: null,
    locale: null,
    limit: async () => null,
    deviceGone: async () => null,
    succeeded: async () => {},
  } as unknown as RouteLimits;
  const intent: Intent = attempt.intent ?? { kind: "sign_in", channel: "browser" };
  return signInWithPassword(limits, { email: attempt.email, password: attempt.password }, { altcha, intent });
}
