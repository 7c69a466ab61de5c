import { vi } from "vitest";

/**
 * Counts Argon2id password verifications through the log: checkPassword writes exactly one
 * `sign_in_failed` or `sign_in_succeeded` event per verification, and nothing else does.
 * Also collects `password_check_refused` errors.
 */
export async function watchPasswordChecks() {
  const { log } = await import("@/lib/log/logger");
  const info = vi.spyOn(log(), "info");
  const error = vi.spyOn(log(), "error");
  const events = (spy: typeof info, names: string[]) =>
    spy.mock.calls.filter(
      ([entry]) => typeof entry === "object" && entry !== null && names.includes((entry as { event?: string }).event ?? ""),
    ).length;
  let verifiedBefore = 0;
  let refusedBefore = 0;
  return {
    /** Verifications since the last reset. */
    verified: () => events(info, ["sign_in_failed", "sign_in_succeeded"]) - verifiedBefore,
    /** Password checks refused for want of an admission since the last reset. */
    refusedWithoutAdmission: () => events(error, ["password_check_refused"]) - refusedBefore,
    reset() {
      verifiedBefore = events(info, ["sign_in_failed", "sign_in_succeeded"]);
      refusedBefore = events(error, ["password_check_refused"]);
    },
  };
}
