/**
 * When a browser session is live: pure decisions of (record, now, policy), so the same rule
 * holds for pages, /api/auth/session and the API, and tests move the clock instead of sleeping.
 */
export type SessionPolicy = {
  /** Since the session was last seen. */
  idleMs: number;
  /** Since sign-in, however active the session has been. */
  absoluteMs: number;
  /** lastSeenAt is written at most this often, so a busy page costs one read, not a write. */
  touchEveryMs: number;
};

export type SessionRecord = {
  id: string;
  userId: string;
  lastSeenAtMs: number;
  expiresAtMs: number;
  revokedAtMs: number | null;
  /** The generation the session's password check read, and the user's now (null: no such user). */
  credentialGeneration: number;
  userCredentialGeneration: number | null;
  /** The user's password was found in a breach corpus and not replaced since. */
  passwordBreached?: boolean;
};

export type SessionEnd = "unknown" | "other_user" | "credentials_changed" | "revoked" | "idle" | "expired";

export type SessionVerdict = { live: true; touch: boolean } | { live: false; reason: SessionEnd };

/** 128 random bits, base64url: the only shape a session id has. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/**
 * A session is live only if its record exists, belongs to the user the cookie names, was made
 * under the user's current password (credential generation), is not
 * revoked, has been seen within the idle timeout and is before its absolute end. A touch is due
 * when the last one is older than `touchEveryMs`; lastSeenAt lags by at most that much, which
 * shortens the idle timeout by as much in the worst case, never lengthens it.
 */
export function judgeSession(record: SessionRecord | null, userId: string, nowMs: number, policy: SessionPolicy): SessionVerdict {
  if (!record) return { live: false, reason: "unknown" };
  if (record.userId !== userId) return { live: false, reason: "other_user" };
  // The password changed after this session's check read the hash (or the account is gone).
  if (record.userCredentialGeneration === null || record.credentialGeneration < record.userCredentialGeneration)
    return { live: false, reason: "credentials_changed" };
  if (record.revokedAtMs !== null && record.revokedAtMs <= nowMs) return { live: false, reason: "revoked" };
  if (nowMs >= record.expiresAtMs) return { live: false, reason: "expired" };
  if (nowMs - record.lastSeenAtMs >= policy.idleMs) return { live: false, reason: "idle" };
  return { live: true, touch: nowMs - record.lastSeenAtMs >= policy.touchEveryMs };
}

/** The absolute end of a session that starts now. */
export function sessionExpiresAtMs(nowMs: number, policy: SessionPolicy): number {
  return nowMs + policy.absoluteMs;
}
