import type { ClientAddress } from "@/lib/http/client-address";
import type { ClaimedDevice } from "@/lib/devices/known-devices";
import type { LockoutSeen } from "@/lib/lockout/repository";
import { newSessionId } from "@/lib/sessions/browser-sessions";
import type { VerifiedUser } from "@/lib/users/accounts";

/**
 * What the gate hands the password check once a request has passed every cheap layer: the
 * validated, normalised username and the password, for this request only. Nothing but
 * AdmissionDesk.issue makes one the desk will honour.
 */
export type SignInAdmission = Readonly<{
  email: string;
  password: string;
  client: ClientAddress;
  device: ClaimedDevice | null;
  route: string;
  /** Only labels (the account page's list of sessions). */
  userAgent: string | null;
  /**
   * The language the request stated (cookie or Accept-Language), null when it stated none. A
   * sign-in that proved more than a password typed on a new device records it as the account's
   * mail language (`completeSignIn` in lib/auth/sign-in.ts).
   */
  locale: string | null;
  /**
   * The id the browser session will have if this sign-in succeeds, chosen now so the "signed in"
   * event can name it ("this device" on the account page).
   */
  sessionId: string;
  /** The address-confirmation link this attempt carries, spent only by the right password. */
  confirms: Readonly<{ linkId: string; userId: string }> | null;
  /** What a right password is for (below). */
  intent: Intent;
  /**
   * The subject's lockout row as the check before the hash budget read it, or as a known device's
   * is presumed (no row); null: none was read.
   */
  lockoutSeen: LockoutSeen | null;
}>;

/**
 * What a right password is for: a new session or token pair (`sign_in`, from a browser or an API
 * client), "Confirm it's you" for a live session (`reauthenticate`), or the current password of a
 * live session that changes it (`change_password`). The first two pass the second step where the
 * account has one; a password change happens inside a session that already passed it.
 */
export type Intent =
  | Readonly<{ kind: "sign_in"; channel: "browser" | "api" }>
  | Readonly<{ kind: "reauthenticate"; sessionId: string }>
  | Readonly<{ kind: "change_password"; sessionId: string }>;

/**
 * How a sign-in may be finished at its next step (lib/factors): a second factor, or for a new
 * device of an account under attack, the code mailed to its owner.
 */
export type SecondStepMethod = "totp" | "passkey" | "recovery_code" | "email_code";

/**
 * The password check's answer: a user, the device token that now identifies their client and the
 * session id chosen for them (`passwordChangeRequired`: the password is in a breach corpus, so the
 * owner must choose another first); a refusal to send as it is (null: the generic 401); or a
 * pending sign-in and no session, for an account with a second factor or a new device that must
 * be confirmed by mail (`ok` is then neither true nor false, so no route can take it for either
 * without saying so).
 */
export type SignInOutcome =
  | {
      ok: true;
      user: VerifiedUser;
      device: { token: string; expiresAtMs: number };
      sessionId: string;
      /** The browser session `sessionId` is written already (with the device and the event); else the route opens it. */
      sessionOpen: boolean;
      passwordChangeRequired: boolean;
    }
  | { ok: false; refusal: Response | null }
  | {
      ok: "second_step";
      pending: { token: string; expiresAtMs: number; step: "second_factor" | "device_confirmation"; methods: SecondStepMethod[] };
      /** Whose password was right; null for a device confirmation's stand-in (a wrong password answered alike). Never sent. */
      user: { id: string; credentialGeneration: number } | null;
    };

/**
 * Issues admissions and takes them back, once each. The desk is a member of the process's one
 * Gatehouse, so every Next.js bundle shares it (docs/decisions/0006-results-not-exceptions.md).
 */
export class AdmissionDesk {
  private readonly unused = new WeakSet<SignInAdmission>();

  issue(
    fields: Omit<SignInAdmission, "sessionId" | "userAgent" | "locale" | "confirms" | "intent" | "lockoutSeen"> &
      Partial<Pick<SignInAdmission, "userAgent" | "locale" | "confirms" | "intent" | "lockoutSeen">>,
  ): SignInAdmission {
    const admission = Object.freeze({
      ...fields,
      userAgent: fields.userAgent ?? null,
      locale: fields.locale ?? null,
      confirms: fields.confirms ?? null,
      intent: fields.intent ?? ({ kind: "sign_in", channel: "browser" } as const),
      lockoutSeen: fields.lockoutSeen ?? null,
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
