import { finishBrowserSecondStep, liveSessionIdOf } from "@/lib/auth/browser-second-step";
import { passSecondStep } from "@/lib/auth/second-step";
import { pendingSignInOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { readPasskeyAnswer } from "@/lib/auth/passkey-sign-in";

export const dynamic = "force-dynamic";

/**
 * The second step with one of the account's passkeys: the per-address limit, a same-origin
 * check, one parse of the JSON body, then passSecondStep (the pending sign-in, counted; the
 * per-account limit; the assertion over this pending sign-in's own challenge, by a passkey of
 * this account), then the session. The second step's lock does not apply: a signature cannot be
 * guessed, so the owner's key finishes the sign-in even while wrong codes have locked the app.
 */
export const POST = limited("/api/auth/second-step/passkey", async (request, limits) => {
  const { gate } = limits;
  const answer = await readPasskeyAnswer(request, gate);
  if (!answer.ok) return answer.response;
  const passkey = answer.credential;
  const passed = await passSecondStep(
    limits,
    pendingSignInOf(request, gate.config),
    "browser",
    { passkey },
    await liveSessionIdOf(request, gate),
    ["second_factor"],
    answer.remember,
  );
  if (!passed.ok) return passed.refusal;
  return finishBrowserSecondStep(request, limits, passed.finished, answer.callbackUrl);
});
