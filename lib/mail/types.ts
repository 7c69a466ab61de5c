/**
 * The mail channel's contract. Domain code (lib/recovery) composes messages and hands them to a
 * Mailer; only lib/mail knows whether they go to an SMTP server or to the outbox folder.
 */

/** One message, already rendered. Links are single-use URLs the message carries (also listed by /dev/outbox). */
export type MailMessage = {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** What the message is for ("verify_email", "password_reset", …): logged and counted, never the address. */
  kind: string;
  links: { label: string; url: string }[];
};

export interface Mailer {
  /**
   * Queues a message and returns at once: sending never blocks or fails the request that caused
   * it. A full queue drops the message (logged and counted) rather than grow without bound.
   */
  send(message: MailMessage, heldId?: string): void;
  /**
   * Writes a promise of mail (`intent`, JSON) to the spool before the request that made it is
   * answered: the id to pass to send() or release(), or null when there is no spool or the write
   * failed (logged; the mail then lives in this process only).
   */
  hold(kind: string, intent: unknown): Promise<string | null>;
  /**
   * A held promise this process is done with: "done" when it sends nothing after all (no such
   * account, over its quota), so the row goes; "retry" when keeping it failed, so the row stays
   * and a sweep tries again once its lease has run out.
   */
  release(heldId: string, outcome: "done" | "retry"): void;
  /** Messages waiting or being retried. */
  depth(): number;
  /** True when send() would drop a message: a caller can then keep an older link alive instead of replacing it with one never sent. */
  full(): boolean;
  /** Resolves when nothing is waiting (tests; shutdown). */
  idle(): Promise<void>;
  /**
   * Stops taking messages, tries to deliver what is queued until the deadline, then spools what
   * is left (when the mailer has a spool) and closes the transport.
   */
  close(deadlineMs?: number): Promise<void>;
  /**
   * Takes what an earlier or a killed process spooled and queues it (at start, then on a timer
   * while running); the number of rows taken.
   */
  resume(limit?: number): Promise<number>;
}
