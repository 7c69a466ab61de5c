import { truncateAddress } from "@/lib/events/security-events";

export const WEEK_MS = 7 * 86_400_000;

/** The Monday 00:00 UTC that starts the week `atMs` falls in. */
export function weekStartMs(atMs: number): number {
  const MONDAY_OFFSET_MS = 4 * 86_400_000; // 1970-01-05, the first Monday
  return Math.floor((atMs - MONDAY_OFFSET_MS) / WEEK_MS) * WEEK_MS + MONDAY_OFFSET_MS;
}

/** The routes whose answers are sign-in attempts: the browser's, the token API's, passkeys and the second step. */
export const SIGN_IN_ROUTES: ReadonlySet<string> = new Set([
  "/api/auth/callback/credentials",
  "/api/auth/passkey",
  "/api/auth/second-step",
  "/api/auth/second-step/passkey",
  "/api/v1/authentication/token",
  "/api/v1/authentication/token/mfa",
  "/api/v1/authentication/token/confirm-device",
]);

/** Outcomes that are not an attacker's: a network answered only these is not "attacking". */
const BENIGN: ReadonlySet<string> = new Set(["sign_in_succeeded", "second_step_due", "device_confirmation_due"]);

/** Networks remembered per flush interval: a flood from many addresses cannot grow the map past this. */
export const NETWORKS_PER_FLUSH = 500;

export type TallyEntry = { weekStartMs: number; name: string; count: number };

/**
 * What the sign-in routes answered, counted in memory (a Map increment on the request path) and
 * flushed by the digest job each minute (lib/lifecycle/digest.ts): `outcome:<outcome>` per answer and
 * `network:<network>` per refusal or failed check, the address shortened as the account page
 * shows it. Past NETWORKS_PER_FLUSH new networks in one interval, the rest are counted under
 * `network:other`.
 */
export class DigestTally {
  private counts = new Map<string, number>();
  private networks = 0;

  constructor(private readonly clock: () => number) {}

  /** `outcome`: a SecurityOutcome (lib/auth/security-log.ts, which calls this). */
  record(route: string, outcome: string, address: string | null): void {
    if (!SIGN_IN_ROUTES.has(route)) return;
    const week = weekStartMs(this.clock());
    this.add(`${week} outcome:${outcome}`);
    const network = address === null || BENIGN.has(outcome) ? "unknown" : truncateAddress(address);
    if (network === "unknown") return;
    const key = `${week} network:${network}`;
    if (this.counts.has(key) || this.networks < NETWORKS_PER_FLUSH) {
      if (!this.counts.has(key)) this.networks += 1;
      this.add(key);
    } else this.add(`${week} network:other`);
  }

  /** A refusal server.mjs answered before the route (an address already refused): counted, its network not known there. */
  recordEarlyRefusal(route: string): void {
    if (SIGN_IN_ROUTES.has(route)) this.add(`${weekStartMs(this.clock())} outcome:rate_limited`);
  }

  /** The counts so far, emptied. */
  drain(): TallyEntry[] {
    const drained = [...this.counts].map(([key, count]) => {
      const space = key.indexOf(" ");
      return { weekStartMs: Number(key.slice(0, space)), name: key.slice(space + 1), count };
    });
    this.counts = new Map();
    this.networks = 0;
    return drained;
  }

  /** Puts counts a failed flush could not write back, to be tried again. */
  restore(entries: TallyEntry[]): void {
    for (const entry of entries) this.add(`${entry.weekStartMs} ${entry.name}`, entry.count);
  }

  private add(key: string, count = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + count);
  }
}
