/**
 * Database and disk failures on a request path, told apart from programming errors, and logged
 * once per episode instead of once per request (an outage of 20 s under load is thousands of
 * requests; a stack trace each drowns the one line an operator needs).
 */

import { errorChain } from "@/lib/log/error-chain";

export type OutageCause = "database" | "disk" | "resources";

// SQLSTATE classes that mean "the database cannot do this now", never "this request was wrong":
// 08 connection exception, 53 insufficient resources (53100 disk full), 57 operator intervention
// (57P01 admin shutdown, 57P03 cannot connect now), 58 system error (58030 I/O), XX internal
// (XX001 data corrupted, XX002 index corrupted).
const UNAVAILABLE_SQLSTATE = /^(08|53|57|58|XX)[0-9A-Z]{3}$/;
const DISK_SQLSTATE = new Set(["53100", "58030"]);
const DISK_ERRNO = new Set(["ENOSPC", "EROFS", "EDQUOT", "EIO"]);
// Out of file descriptors or memory for a socket: the process, not the request, is short.
const RESOURCE_ERRNO = new Set(["EMFILE", "ENFILE", "ENOBUFS", "ENOMEM"]);
const NETWORK_ERRNO = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
// Prisma's codes for an unreachable, timed-out or closed database (P1xxx) and a full pool (P2024).
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const DISK_MESSAGE = /no space left on device|disk full|read-only file system|could not (extend|write to) file|ENOSPC|EROFS/i;
// "Transaction already closed" (Prisma's P2028): a transaction whose connection died in its COMMIT
// is reported as the failed rollback after it, not as the lost connection (issue 59: a
// registration in flight when PostgreSQL stopped got 500); "not queryable": node-postgres on a
// connection that has already failed.
const UNAVAILABLE_MESSAGE =
  /connection terminated|Transaction already closed|connection error and is not queryable|connection (refused|reset|closed|ended)|terminating connection|server closed the connection|can't reach database|timed out fetching a new connection|the database system is (starting up|shutting down|in recovery)|Aborted\(\)|PGlite is closed|invalid page in block|could not read block|ECONNREFUSED|ECONNRESET/i;

/** "disk", "resources" (out of file descriptors) or "database" when the error says the database or its disk cannot serve now; null for anything else. */
export function outageCause(error: unknown): OutageCause | null {
  let cause: OutageCause | null = null;
  for (const item of errorChain(error)) {
    const codes = [item.code, item.originalCode].filter((code): code is string => typeof code === "string");
    const message = typeof item.message === "string" ? item.message : "";
    const name = typeof item.name === "string" ? item.name : "";
    if (codes.some((code) => DISK_SQLSTATE.has(code) || DISK_ERRNO.has(code)) || DISK_MESSAGE.test(message)) return "disk";
    if (codes.some((code) => RESOURCE_ERRNO.has(code)) || /EMFILE|too many open files/i.test(message)) return "resources";
    if (
      codes.some((code) => UNAVAILABLE_SQLSTATE.test(code) || NETWORK_ERRNO.has(code) || PRISMA_UNAVAILABLE.has(code)) ||
      name === "PrismaClientInitializationError" ||
      name === "PrismaClientRustPanicError" ||
      // The WebAssembly PostgreSQL of PGlite aborted (a full disk mid-write ends it this way).
      name === "RuntimeError" ||
      UNAVAILABLE_MESSAGE.test(message)
    )
      cause = "database";
  }
  return cause;
}

/** A short, address-free description of the failure for the episode's log line. */
export function describeOutage(error: unknown): { code?: string; message: string } {
  for (const item of errorChain(error)) {
    const code = [item.originalCode, item.code].find((value): value is string => typeof value === "string");
    const message = typeof item.message === "string" ? item.message.split("\n").find((line) => line.trim() !== "") : undefined;
    if (code || message) return { ...(code ? { code } : {}), message: (message ?? "").trim().slice(0, 200) };
  }
  return { message: String(error).slice(0, 200) };
}

export type OutageLogger = { error(entry: object): void; info(entry: object): void };

/**
 * Episodes of one cause: the first failure logs one line (error: every sign-in is refused);
 * later ones are only counted; after `quietMs` without a failure the episode is over, and the
 * next failure logs again, with how many requests the last episode refused.
 */
export class OutageLog {
  private readonly episodes = new Map<OutageCause, { startedAtMs: number; lastAtMs: number; refused: number }>();

  constructor(
    private readonly log: OutageLogger,
    private readonly clock: () => number,
    private readonly quietMs = 30_000,
  ) {}

  failed(cause: OutageCause, route: string, error: unknown): void {
    const now = this.clock();
    const episode = this.episodes.get(cause);
    if (episode && now - episode.lastAtMs < this.quietMs) {
      episode.lastAtMs = now;
      episode.refused += 1;
      return;
    }
    if (episode)
      this.log.info({
        event: "service_unavailable_ended",
        cause,
        refused: episode.refused,
        durationMs: episode.lastAtMs - episode.startedAtMs,
      });
    this.episodes.set(cause, { startedAtMs: now, lastAtMs: now, refused: 1 });
    this.log.error({ event: "service_unavailable", cause, route, ...describeOutage(error), effect: "requests answered 503 unavailable" });
  }
}
