/**
 * For an async handler called from a React prop: `onSubmit={(event) => handled(onSubmit(event))}`.
 * React drops what a handler returns, so a rejection would go unhandled: each handler shows the
 * failures it expects (a refusal, the network), and what still escapes is a bug, reported here
 * rather than lost.
 */
export function handled(running: Promise<unknown>): void {
  running.catch((error: unknown) => console.error(error));
}
