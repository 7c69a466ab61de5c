import { resendDeviceCode } from "@/lib/auth/second-step";
import { pendingSignInOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";

export const dynamic = "force-dynamic";

/**
 * "Resend code" on the device step: the same-origin check and the per-address limit (the wrapper;
 * it sends mail on this browser's behalf), then resendDeviceCode for the pending sign-in in this
 * browser's cookie. No body is read. 202 alike for a right password's pending sign-in and a
 * stand-in (only the owner's mailbox tells them apart); 401 `second_step_invalid` when none is live.
 */
export const POST = limited("/api/auth/second-step/resend", async (request, limits) => {
  const { gate } = limits;
  return resendDeviceCode(limits, pendingSignInOf(request, gate.config));
});
