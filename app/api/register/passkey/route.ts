import { emailRequestRoute, REGISTRATION_ACCEPTED } from "@/lib/auth/email-request";
import { startPasskeyAccount } from "@/lib/users/passkey-accounts";

export const dynamic = "force-dynamic";

/**
 * "Create an account with a passkey": `{ email, altcha }` → the registration's 202 for a new and a
 * taken address alike. A new address becomes an account with no password and no confirmed address
 * (decision 39); its owner gets the link whose page makes the passkey. A taken one's owner is told
 * someone tried, as registration tells them. Both in the background, after the same one statement.
 */
export const POST = emailRequestRoute(
  "/api/register/passkey",
  REGISTRATION_ACCEPTED,
  async (gate, email, limits) => {
    const created = await startPasskeyAccount(gate.prisma, { email, locale: limits.locale });
    gate.log.info({ event: created ? "passkey_account_started" : "registration_for_taken_address" });
    await gate.recovery.passkeyStartRequested(email);
  },
  "new",
);
