import { finishBrowserSecondStep, liveSessionIdOf } from "@/lib/auth/browser-second-step";
import { answerRefused, BROWSER_STEPS, browserSecondStepSchema, passSecondStep } from "@/lib/auth/second-step";
import { readJson } from "@/lib/http/body";
import { pendingSignInOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";

export const dynamic = "force-dynamic";

/**
 * The browser's second step with a code of the authenticator app or a recovery code, or a new
 * device's confirmation with the code mailed to the owner (the pending sign-in says which): the
 * per-address limit (the wrapper, before the body, after its same-origin check), one parse of the JSON
 * body, then passSecondStep (the pending sign-in in this browser's cookie, counted; the
 * per-account limit; the second step's lock, counted; the code, good once), then the session.
 * 200 `{ url }` with the session and device cookies; 401 `invalid_code` or `second_step_invalid`;
 * 400 for a code of the wrong shape; 429 for the limits and the lock.
 */
export const POST = limited("/api/auth/second-step", async (request, limits) => {
  const { gate } = limits;
  // It signs a browser in: no other site may make it do so, whatever the media type.
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  const input = browserSecondStepSchema.safeParse(body.value);
  if (!input.success) return answerRefused(input.error);
  const passed = await passSecondStep(
    limits,
    pendingSignInOf(request, gate.config),
    "browser",
    input.data.answer,
    await liveSessionIdOf(request, gate),
    BROWSER_STEPS,
    input.data.remember,
  );
  if (!passed.ok) return passed.refusal;
  return finishBrowserSecondStep(request, limits, passed.finished, input.data.callbackUrl);
});
