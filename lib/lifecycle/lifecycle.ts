import { LIFECYCLE_SYMBOL, STARTED_SYMBOL } from "@/lib/server-contract.mjs";
import { gatehouse } from "@/lib/app";
import { startRetention } from "@/lib/retention/job";
import { messageOf } from "@/lib/log/message";
import { passkeyObstacle } from "@/lib/passkeys/passkey-rules";

/**
 * The process's life after start: server.mjs (which cannot import app code) and every Next.js
 * bundle share one object on globalThis (docs/decisions/0006-results-not-exceptions.md), so readiness, draining and the final close agree.
 */
export type Lifecycle = {
  /** Set by server.mjs at the first SIGTERM or SIGINT: readiness answers 503 from then on. */
  draining: boolean;
  /** How long in-flight requests may take to finish before their connections are closed. */
  shutdownGraceMs: number;
  /** How long the listener keeps accepting after the signal (readiness already 503), before it closes. */
  shutdownDelayMs: number;
  /** A connection that sends no byte within this long is closed. */
  firstByteTimeoutMs: number;
  /** Closes what the app opened (limiter and replay stores, then the database), once. */
  close(): Promise<void>;
};

export type LifecycleTimings = Pick<Lifecycle, "shutdownGraceMs" | "shutdownDelayMs" | "firstByteTimeoutMs">;

export function publishLifecycle(timings: LifecycleTimings, close: () => Promise<void>): Lifecycle {
  let closing: Promise<void> | undefined;
  const lifecycle: Lifecycle = { draining: false, ...timings, close: () => (closing ??= close()) };
  (globalThis as Record<symbol, unknown>)[LIFECYCLE_SYMBOL] = lifecycle;
  ((globalThis as Record<symbol, unknown>)[STARTED_SYMBOL] as (() => void) | undefined)?.();
  return lifecycle;
}

export function isDraining(): boolean {
  return ((globalThis as Record<symbol, unknown>)[LIFECYCLE_SYMBOL] as Lifecycle | undefined)?.draining === true;
}

/** Validates configuration, opens (and migrates) the database and builds every layer; a mistake stops the start. */
export async function startGatehouse(): Promise<void> {
  try {
    const gate = await gatehouse();
    const retention = startRetention(gate.prisma, gate.config, gate.clock, gate.log);
    // Said once, here: the account page tells the owner the same, and every attempt would fail.
    const obstacle = passkeyObstacle(gate.passkeySettings.rp.origin);
    if (obstacle)
      gate.log.warn({
        event: "passkeys_unavailable",
        reason: obstacle,
        origin: gate.passkeySettings.rp.origin,
        hint: "browsers make passkeys only for a domain name over https, or at http://localhost: set NEXTAUTH_URL to one",
      });
    // server.mjs calls close() once the last in-flight request has been answered.
    publishLifecycle(
      {
        shutdownGraceMs: gate.config.http.shutdownGraceMs,
        shutdownDelayMs: gate.config.http.shutdownDelayMs,
        firstByteTimeoutMs: gate.config.http.socketFirstByteTimeoutMs,
      },
      async () => {
        await retention.stop();
        await gate.close();
      },
    );
  } catch (error) {
    console.error(`Gatehouse cannot start: ${messageOf(error)}`);
    process.exit(1);
  }
}
