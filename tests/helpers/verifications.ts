import { vi } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";

/**
 * Counts Argon2id password verifications through the instance's own hasher (a counting wrapper
 * around it: one call per password check, an unknown account's dummy check included), and the
 * password checks refused for want of an admission through its log.
 */
export async function watchPasswordChecks(gate: Gatehouse) {
  const inner = gate.hasher;
  let verifications = 0;
  gate.hasher = {
    params: inner.params,
    hash: (password) => inner.hash(password),
    verify: (storedHash, password) => {
      verifications += 1;
      return inner.verify(storedHash, password);
    },
  };
  const error = vi.spyOn(gate.log, "error");
  const refusals = () =>
    error.mock.calls.filter(
      ([entry]) => typeof entry === "object" && entry !== null && (entry as { event?: string }).event === "password_check_refused",
    ).length;
  let verifiedBefore = 0;
  let refusedBefore = 0;
  return {
    /** Verifications since the last reset. */
    verified: () => verifications - verifiedBefore,
    /** Password checks refused for want of an admission since the last reset. */
    refusedWithoutAdmission: () => refusals() - refusedBefore,
    reset() {
      verifiedBefore = verifications;
      refusedBefore = refusals();
    },
  };
}
