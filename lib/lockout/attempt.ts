import type { LockoutCheck, LockoutPolicy } from "./lockout-rules";
import type { AdmittedAttempt, LockoutRepository, LockoutSeen } from "./repository";

/** One lock: its key (a username's digest, or one known device's) and the rule it keeps. */
export type LockSubject = { key: string; policy: LockoutPolicy };

/** What a finished sign-in clears (a sign-in with no count of its own, a passkey's, needs only this). */
export type LockClearing = { clearAfterSuccess(nowMs: number): Promise<void> };

/**
 * One sign-in attempt's dealings with the lock that counts it: `check` before the hash budget,
 * `admit` (counted) inside it, `clearAfterSuccess` once the sign-in is written. The rows each step
 * reads are kept here and handed to the next (the count starts from the check's read; a known
 * device's count reads its username's strangers' lock, whose cap its success lifts), so each saves
 * a statement and no caller carries a row.
 *
 * Two kinds: the strangers' (the username's lock, which a success clears), and an owner's (a known
 * device's own lock, presumed unwritten as a device issued at its last sign-in is; its success
 * lifts only NIST's cap on the strangers' lock: strangers stay locked out while the owner signs in).
 */
export class LockoutAttempt implements LockClearing {
  #seen: LockoutSeen | null;
  #strangersSeen: (LockoutCheck & { seen: LockoutSeen }) | undefined;

  private constructor(
    private readonly repo: LockoutRepository,
    readonly subject: LockSubject,
    /** The strangers' lock whose cap this owner's success lifts; null: the subject is that lock. */
    private readonly strangers: LockSubject | null,
  ) {
    this.#seen = strangers ? { usernameKey: subject.key, row: null } : null;
  }

  /** Counted on the username's lock that every client with no known device shares; a success clears it. */
  static strangers(repo: LockoutRepository, username: LockSubject): LockoutAttempt {
    return new LockoutAttempt(repo, username, null);
  }

  /** Counted on a known device's own lock; a success lifts the cap of `strangers` only. */
  static owner(repo: LockoutRepository, device: LockSubject, strangers: LockSubject): LockoutAttempt {
    return new LockoutAttempt(repo, device, strangers);
  }

  /** Whether the subject is locked now (the row read is kept for `admit`). */
  async check(nowMs: number): Promise<LockoutCheck> {
    const checked = await this.repo.check(this.subject.key, nowMs, this.subject.policy);
    this.#seen = checked.seen;
    return checked;
  }

  /**
   * Atomically: refused while locked, else counted as a failure before the password is verified
   * (a wrong password `fingerprint` names that the streak remembers is admitted uncounted).
   */
  async admit(nowMs: number, fingerprint: string): Promise<AdmittedAttempt> {
    const strangers = this.strangers ? { usernameKey: this.strangers.key, policy: this.strangers.policy } : undefined;
    const admitted = await this.repo.admitAttempt(
      this.subject.key,
      nowMs,
      this.subject.policy,
      this.#seen ?? undefined,
      strangers,
      fingerprint,
    );
    if (admitted.allowed) this.#strangersSeen = admitted.alongside;
    return admitted;
  }

  /**
   * The locks a written sign-in clears. A known device's own lock needs no reset: the device was
   * replaced, and no token names its id again (the row goes with the retention pass). The
   * strangers' cap as the count read it; a cap reached in between stays until the owner's next
   * sign-in from a known device, or its hold ends (one statement fewer for every owner).
   */
  async clearAfterSuccess(nowMs: number): Promise<void> {
    if (!this.strangers) return this.repo.reset(this.subject.key);
    return liftCap(this.repo, this.strangers, nowMs, this.#strangersSeen);
  }
}

/**
 * NIST's cap on the strangers' lock lasts only until the owner proves more than a password from a
 * new device (a known device, a passkey): what such a success clears.
 */
export function liftsStrangersCap(repo: LockoutRepository, strangers: LockSubject): LockClearing {
  return { clearAfterSuccess: (nowMs) => liftCap(repo, strangers, nowMs) };
}

async function liftCap(
  repo: LockoutRepository,
  strangers: LockSubject,
  nowMs: number,
  seen?: LockoutCheck & { seen: LockoutSeen },
): Promise<void> {
  const check = seen ?? (await repo.check(strangers.key, nowMs, strangers.policy));
  if (check.locked && check.capped) await repo.resetAsSeen(check.seen);
}
