import { prisma } from "@/lib/db/client";
import type { ClientAddress } from "@/lib/http/client-address";
import { log } from "@/lib/log/logger";
import { verifyCredentials, type AccountUser, type Credentials } from "@/lib/users/accounts";
import type { Gatehouse } from "./gatehouse";

/**
 * The Argon2id layer with its bookkeeping, shared by every password sign-in (next-auth's
 * authorize() and the token endpoint): a failure counts toward the username's lockout whether or
 * not the account exists; a success clears the count.
 */
export async function authenticate(gate: Gatehouse, input: Credentials, client: ClientAddress): Promise<AccountUser | null> {
  const usernameKey = gate.usernameKey(input.email);
  const user = await verifyCredentials(await prisma(), input, gate.argon2, (error) =>
    log().warn({ event: "password_rehash_failed", err: error instanceof Error ? error.message : String(error) }),
  );
  if (!user) {
    const state = await gate.lockouts.recordFailure(usernameKey, gate.clock(), gate.lockoutPolicy);
    log().info({ event: "sign_in_failed", failureCount: state.failureCount, locked: state.lockedUntilMs !== null });
    await gate.events.signInFailed(input.email, client, state);
    return null;
  }
  await gate.lockouts.reset(usernameKey);
  log().info({ event: "sign_in_succeeded", userId: user.id, rehashed: user.rehashed });
  await gate.events.signInSucceeded(user.id, client);
  return { id: user.id, email: user.email };
}
