/**
 * The process's life after start: server.mjs (which cannot import app code) and every Next.js
 * bundle share one object on globalThis, so readiness, draining and the final close agree.
 */
export type Lifecycle = {
  /** Set by server.mjs at the first SIGTERM or SIGINT: readiness answers 503 from then on. */
  draining: boolean;
  /** How long in-flight requests may take to finish before their connections are closed. */
  shutdownGraceMs: number;
  /** Closes what the app opened (limiter and replay stores, then the database), once. */
  close(): Promise<void>;
};

import { LIFECYCLE_SYMBOL, STARTED_SYMBOL } from "@/lib/server-contract.mjs";

export function publishLifecycle(shutdownGraceMs: number, close: () => Promise<void>): Lifecycle {
  let closing: Promise<void> | undefined;
  const lifecycle: Lifecycle = { draining: false, shutdownGraceMs, close: () => (closing ??= close()) };
  (globalThis as Record<symbol, unknown>)[LIFECYCLE_SYMBOL] = lifecycle;
  ((globalThis as Record<symbol, unknown>)[STARTED_SYMBOL] as (() => void) | undefined)?.();
  return lifecycle;
}

export function isDraining(): boolean {
  return ((globalThis as Record<symbol, unknown>)[LIFECYCLE_SYMBOL] as Lifecycle | undefined)?.draining === true;
}
