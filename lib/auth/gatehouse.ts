import { getConfig, type AppConfig } from "@/lib/config/env";
import { getDatabase } from "@/lib/db/client";
import { memoryReplayStore, type ReplayStore } from "@/lib/captcha/replay-store";
import type { AltchaSettings } from "@/lib/captcha/altcha";
import { parseTrustedProxies, peerHeaderFromServer, resolveClientAddress, type ClientAddress } from "@/lib/http/client-address";
import { prismaLockoutRepository, type LockoutRepository } from "@/lib/lockout/repository";
import type { LockoutPolicy } from "@/lib/lockout/rules";
import { log } from "@/lib/log/logger";
import { HashBudget } from "@/lib/password/hash-budget";
import { argon2Params, type Argon2Params } from "@/lib/password/params";
import { digestKey, RateLimiter } from "@/lib/rate-limit/limiter";
import { loadPolicies } from "@/lib/rate-limit/policies";
import { MemoryRateLimitStore } from "@/lib/rate-limit/stores/memory";

/** Every protection layer, built once per process from the configuration. */
export type Gatehouse = {
  config: AppConfig;
  clock: () => number;
  limiter: RateLimiter;
  replays: ReplayStore;
  altcha: AltchaSettings;
  lockouts: LockoutRepository;
  lockoutPolicy: LockoutPolicy;
  hashBudget: HashBudget;
  argon2: Argon2Params;
  clientAddress(headers: Headers): ClientAddress;
  /** The lockout key of a normalised username: a digest, so the table holds no usernames. */
  usernameKey(email: string): string;
};

async function build(): Promise<Gatehouse> {
  const config = getConfig();
  const clock = Date.now;
  const policies = loadPolicies(process.env);
  const trustedProxies = parseTrustedProxies(config.TRUSTED_PROXIES);
  const { prisma } = await getDatabase();
  // Memory is the only store so far: limits are per instance (see the README before scaling out).
  const store = new MemoryRateLimitStore({ maxEntries: config.RATE_LIMIT_MEMORY_MAX_ENTRIES, clock });
  const limiter = new RateLimiter(store, policies, config.RATE_LIMIT_KEY_SECRET, clock, (policy, error) =>
    log().error({ event: "rate_limit_store_failed", policy: policy.name, failMode: policy.failMode, err: String(error) }),
  );
  let warnedUnknownPeer = false;
  return {
    config,
    clock,
    limiter,
    replays: memoryReplayStore(config.RATE_LIMIT_MEMORY_MAX_ENTRIES, clock),
    altcha: { hmacSecret: config.ALTCHA_HMAC_SECRET, expiresSeconds: config.ALTCHA_EXPIRES_SECONDS, maxCounter: config.ALTCHA_MAX_COUNTER },
    lockouts: prismaLockoutRepository(prisma),
    lockoutPolicy: {
      threshold: config.LOCKOUT_THRESHOLD,
      baseLockMs: config.LOCKOUT_BASE_SECONDS * 1000,
      maxLockMs: config.LOCKOUT_MAX_SECONDS * 1000,
      quietPeriodMs: config.LOCKOUT_QUIET_HOURS * 3_600_000,
    },
    hashBudget: new HashBudget(config.HASH_CONCURRENCY, config.HASH_QUEUE),
    argon2: argon2Params(config.ARGON2_PROFILE),
    clientAddress(headers) {
      const client = resolveClientAddress(headers, { trustedProxies, ipv6PrefixLength: config.IPV6_PREFIX_LENGTH, peerHeader: peerHeaderFromServer() });
      if (client.source === "unknown" && !warnedUnknownPeer) {
        warnedUnknownPeer = true;
        // Everyone now shares one bucket: safe, but one abuser locks out all. Start with server.mjs.
        log().error({ event: "client_address_unknown", hint: "run server.mjs (npm start), not next start" });
      }
      return client;
    },
    usernameKey: (email) => digestKey(config.RATE_LIMIT_KEY_SECRET, ["lockout", email]),
  };
}

const globalForGatehouse = globalThis as typeof globalThis & { __gatehouse?: Promise<Gatehouse> };

export function gatehouse(): Promise<Gatehouse> {
  if (!globalForGatehouse.__gatehouse) {
    const building = build();
    globalForGatehouse.__gatehouse = building;
    building.catch(() => (globalForGatehouse.__gatehouse = undefined));
  }
  return globalForGatehouse.__gatehouse;
}
