import { LIFECYCLE_SYMBOL, STARTED_SYMBOL } from "@/lib/server-contract.mjs";
import { gatehouse } from "@/lib/app";
import { startRetention } from "@/lib/retention/job";
import { startPeriodic } from "@/lib/jobs/jobs";
import { startDigest } from "./digest";
import { messageOf } from "@/lib/log/message";
import { connectionKey, parseTrustedProxies } from "@/lib/http/client-address";
import type { AppConfig } from "@/lib/config/env";
import { openAdminChannel } from "@/lib/ops/admin-channel";
import { runAdminRequest } from "@/lib/ops/admin-request";
import { startWebhookDispatcher } from "@/lib/webhooks/dispatcher";
import { startAttackWatch } from "@/lib/webhooks/attacks";
import { startTracing } from "@/lib/tracing/setup";
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
  /**
   * What a socket's connections count under for MAX_CONNECTIONS_PER_ADDRESS: the limiter's key for
   * its address (null for a trusted proxy, which carries many clients), and how many shares that
   * key may hold (TRUSTED_NETWORK_ALLOWANCE in the client's own networks, else 1).
   */
  connectionKey(socketAddress: string): { key: string | null; allowance: number };
  /** Closes what the app opened (limiter and replay stores, then the database), once. */
  close(): Promise<void>;
};

export type LifecycleTimings = Pick<Lifecycle, "shutdownGraceMs" | "shutdownDelayMs" | "firstByteTimeoutMs" | "connectionKey">;

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

const DISK_READING_EVERY_MS = 5_000;

/** Validates configuration, opens (and migrates) the database and builds every layer; a mistake stops the start. */
export async function startGatehouse(): Promise<void> {
  try {
    const gate = await gatehouse();
    // Before the listener opens (server.mjs waits for publishLifecycle), so every request is traced.
    const tracing = gate.config.tracing ? startTracing(gate.config.tracing) : null;
    const retention = startRetention(gate.prisma, gate.config, gate.clock, gate.log);
    // The disk guard's reading every 5 s: its warning comes before the refusal, not at it.
    const disk = gate.disk
      ? startPeriodic(async () => void (await gate.disk!.sample()), {
          intervalMs: DISK_READING_EVERY_MS,
          firstAfterMs: 0,
          onError: () => {},
        })
      : null;
    // The digest's counts are flushed, and its week claimed, by every instance (one mail a week).
    const digest = gate.config.digest ? startDigest(gate) : null;
    const webhooks = gate.config.webhooks
      ? startWebhookDispatcher({
          prisma: gate.prisma,
          settings: gate.config.webhooks,
          clock: gate.clock,
          log: gate.log,
          metrics: gate.metrics,
        })
      : null;
    // username/address under attack and calm again, queued in the webhook outbox (lib/webhooks/attacks.ts).
    const attacks = gate.addressWatch
      ? startAttackWatch({
          sql: gate.sql,
          addressWatch: gate.addressWatch,
          clock: gate.clock,
          onError: (error) => gate.log.warn({ event: "attack_watch_failed", err: messageOf(error) }),
        })
      : null;
    // PGlite is this process's alone: `npm run admin` asks it through this socket instead of
    // opening the folder (docs/decisions/0024). PostgreSQL takes the command's own connection.
    const target = gate.config.database.target;
    const admin =
      target.kind === "pglite"
        ? await openAdminChannel(
            target.dataDir,
            (request) => runAdminRequest(gate, request, "live"),
            (message) => gate.log.warn({ event: "admin_channel_unavailable", reason: message }),
          )
        : null;
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
        connectionKey: connectionKeys(gate.config),
      },
      async () => {
        await admin?.close();
        await attacks?.stop();
        await webhooks?.stop();
        await retention.stop();
        await disk?.stop();
        await digest?.stop();
        await gate.close();
        await tracing?.shutdown();
      },
    );
  } catch (error) {
    console.error(`Gatehouse cannot start: ${messageOf(error)}`);
    process.exit(1);
  }
}

/** Counts a socket's connections under its client's key (trusted proxies under none). */
function connectionKeys(config: Pick<AppConfig, "http" | "rateLimit">): Lifecycle["connectionKey"] {
  const options = {
    trustedProxies: parseTrustedProxies(config.http.trustedProxies),
    trustedNetworks: parseTrustedProxies(config.http.trustedNetworks, "TRUSTED_NETWORKS"),
    ipv6PrefixLength: config.http.ipv6PrefixLength,
  };
  const allowance = config.rateLimit.trustedNetworkAllowance;
  return (socketAddress) => {
    const { key, trustedNetwork } = connectionKey(socketAddress, options);
    return { key, allowance: trustedNetwork ? allowance : 1 };
  };
}
