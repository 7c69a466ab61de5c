import type { Gatehouse } from "@/lib/gatehouse";

/**
 * Counts Argon2id password verifications through the instance's own hasher (a counting wrapper
 * around it: one call per password check, an unknown account's dummy check included).
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
  let verifiedBefore = 0;
  return {
    /** Verifications since the last reset. */
    verified: () => verifications - verifiedBefore,
    reset() {
      verifiedBefore = verifications;
    },
  };
}
