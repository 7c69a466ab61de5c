import type { ClientAddress } from "@/lib/http/client-address";
import type { KnownDevice } from "@/lib/devices/known-devices";
import { newSessionId } from "@/lib/sessions/browser-sessions";
import type { VerifiedUser } from "@/lib/users/accounts";

/**
 * What the gate hands the password check once a request has passed every cheap layer: the
 * validated, normalised username and the password, for this request only. Nothing but
 * AdmissionDesk.issue makes one the desk will honour.
 *
 * `sessionId`: the id the browser session will have if this sign-in succeeds, chosen now so the
 * "signed in" event can name it ("this device" on the account page). `userAgent` only labels.
 * `confirms`: the address-confirmation link this attempt carries, spent only by the right password.
 * `reauthenticates`: the live session whose owner is asked for the password again ("Confirm it's you").
 */
export type SignInAdmission = Readonly<{
  email: string;
  password: string;
  client: ClientAddress;
  device: KnownDevice | null;
  route: string;
  userAgent: string | null;
  sessionId: string;
  confirms: Readonly<{ linkId: string; userId: string }> | null;
  reauthenticates: string | null;
}>;

/**
 * The password check's answer: a user, the device token that now identifies their client and the
 * session id chosen for them, or a refusal to send as it is (null: the generic 401).
 * `passwordChangeRequired`: the password is in a breach corpus; the owner must choose another first.
 */
export type SignInOutcome =
  | { ok: true; user: VerifiedUser; device: { token: string; expiresAtMs: number }; sessionId: string; passwordChangeRequired: boolean }
  | { ok: false; refusal: Response | null };

/**
 * Issues admissions and takes them back, once each. The desk is a member of the process's one
 * Gatehouse, so every bundle that Next.js builds shares it (a module-level set would not be).
 */
export class AdmissionDesk {
  private readonly unused = new WeakSet<SignInAdmission>();

  issue(
    fields: Omit<SignInAdmission, "sessionId" | "userAgent" | "confirms" | "reauthenticates"> &
      Partial<Pick<SignInAdmission, "userAgent" | "confirms" | "reauthenticates">>,
  ): SignInAdmission {
    const admission = Object.freeze({
      ...fields,
      userAgent: fields.userAgent ?? null,
      confirms: fields.confirms ?? null,
      reauthenticates: fields.reauthenticates ?? null,
      sessionId: newSessionId(),
    });
    this.unused.add(admission);
    return admission;
  }

  /** True the first time for an admission this desk issued; false for anything else. */
  take(admission: SignInAdmission): boolean {
    return this.unused.delete(admission);
  }
}
