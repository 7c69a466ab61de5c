import { AsyncLocalStorage } from "node:async_hooks";
import type { ClientAddress } from "@/lib/http/client-address";
import type { KnownDevice } from "@/lib/devices/known-devices";
import { newSessionId } from "@/lib/sessions/browser-sessions";
import type { VerifiedUser } from "@/lib/users/accounts";

/**
 * What the gate hands the password check once a request has passed every cheap layer: the
 * validated, normalised username and the password, for this request only. Nothing but
 * AdmissionDesk.issue makes one the desk will honour.
 */
/**
 * `sessionId`: the id the browser session will have if this sign-in succeeds, chosen now so the
 * "signed in" event can name it ("this device" on the account page). `userAgent` only labels.
 */
export type SignInAdmission = Readonly<{
  email: string;
  password: string;
  client: ClientAddress;
  device: KnownDevice | null;
  route: string;
  userAgent: string | null;
  sessionId: string;
}>;

/**
 * The password check's answer: a user and the device token that now identifies their client, or
 * a refusal to send as it is (null: the generic 401).
 */
export type PasswordOutcome =
  { ok: true; user: VerifiedUser; device: { token: string; expiresAtMs: number } } | { ok: false; refusal: Response | null };

type Slot = { admission: SignInAdmission; outcome?: PasswordOutcome };

/**
 * Issues admissions and takes them back, once each. The desk is a member of the process's one
 * Gatehouse, so every bundle that Next.js builds shares it (a module-level set would not be).
 */
export class AdmissionDesk {
  private readonly unused = new WeakSet<SignInAdmission>();
  private readonly scope = new AsyncLocalStorage<Slot>();

  issue(fields: {
    email: string;
    password: string;
    client: ClientAddress;
    device: KnownDevice | null;
    route: string;
    userAgent?: string | null;
  }): SignInAdmission {
    const admission = Object.freeze({ ...fields, userAgent: fields.userAgent ?? null, sessionId: newSessionId() });
    this.unused.add(admission);
    return admission;
  }

  /** True the first time for an admission this desk issued; false for anything else. */
  take(admission: SignInAdmission): boolean {
    return this.unused.delete(admission);
  }

  /**
   * Runs `work` (next-auth) with the admission in the request's async context, where next-auth's
   * authorize() finds it, and returns what the password check decided, if it ran.
   */
  async carry<T>(admission: SignInAdmission, work: () => Promise<T>): Promise<{ result: T; outcome: PasswordOutcome | undefined }> {
    const slot: Slot = { admission };
    const result = await this.scope.run(slot, work);
    return { result, outcome: slot.outcome };
  }

  /** The admission carried into this async context, if any. */
  current(): Slot | undefined {
    return this.scope.getStore();
  }
}
