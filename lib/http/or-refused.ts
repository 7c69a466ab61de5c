/**
 * The one way a step that may refuse a request says so: it returns `refuse(response)` with the
 * exact answer to send, or `accept({ ...fields })` with what it found. Nothing throws a refusal.
 *
 * A result rather than a thrown error, because the sign-in pipeline reads top to bottom as a
 * list of `if (!step.ok) return step;` lines, each room's refusal visible where it is decided, and
 * because `instanceof` fails across Next.js bundles (docs/decisions/0006-results-not-exceptions.md). The accepted fields are named by the producer (`link.token`, `admitted.admission`), not
 * wrapped in a `value`, so callers read what they got.
 */
export type OrRefused<T extends object> = ({ ok: true } & T) | Refusal;

export type Refusal = { ok: false; response: Response };

export function accept<T extends object>(fields: T): { ok: true } & T {
  return { ok: true, ...fields };
}

export function refuse(response: Response): Refusal {
  return { ok: false, response };
}
