import type { SecondStepMethod } from "@/lib/factors/store";
import type { VerifiedUser } from "@/lib/users/accounts";

export type { SecondStepMethod };

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
 * A sign-in's answer: a user, the device token that now identifies their client and the session
 * id chosen for them (`passwordChangeRequired`: the password is in a breach corpus, so the owner
 * must choose another first); a refusal to send as it is (null: the generic 401); or a pending
 * sign-in and no session, for an account with a second factor or a new device that must be
 * confirmed by mail (`ok` is then neither true nor false, so no route can take it for either
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
      /** A "Remember this browser" grant given or rotated by this sign-in: its secret for the browser's cookie. */
      remember?: { secret: string; untilMs: number };
    }
  | { ok: false; refusal: Response | null }
  | {
      ok: "second_step";
      pending: {
        token: string;
        expiresAtMs: number;
        step: "second_factor" | "device_confirmation" | "mailbox";
        methods: SecondStepMethod[];
      };
      /**
       * Whose password was right (or, mailbox first, whose mailbox gets the code); null for a stand-in
       * (a wrong password or an address with no account, answered alike). Never sent.
       */
      user: { id: string; credentialGeneration: number } | null;
    };
