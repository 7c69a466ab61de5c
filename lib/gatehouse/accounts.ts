import { randomBytes } from "node:crypto";
import type { Brand } from "@/lib/brand/brand";
import type { AppConfig } from "@/lib/config/env";
import type { Database } from "@/lib/db/client";
import { sqlKnownDevices, type KnownDevices } from "@/lib/devices/known-devices";
import { prismaSecurityEvents, type SecurityEvents } from "@/lib/events/security-events";
import { prismaPendingSignIns, type PendingSignIns } from "@/lib/factors/pending-sign-ins";
import { sealKeyOf } from "@/lib/factors/sealed-secret";
import { prismaFactors, type Factors } from "@/lib/factors/store";
import { appOrigin } from "@/lib/http/same-origin";
import type { ReplayStore } from "@/lib/captcha/replay-store";
import type { Logger } from "@/lib/log/logger";
import { sqlLockoutRepository, type LockoutRepository } from "@/lib/lockout/repository";
import { prismaPasskeys, type Passkeys } from "@/lib/passkeys/store";
import { relyingParty, type PasskeySettings } from "@/lib/passkeys/webauthn";
import { digestKey } from "@/lib/rate-limit/limiter";
import { prismaEmailTokens, type EmailTokens } from "@/lib/recovery/email-tokens";
import { prismaBrowserSessions, type BrowserSessions } from "@/lib/sessions/browser-sessions";

type Settings = Pick<AppConfig, "devices" | "factors" | "webhooks" | "http" | "passkeys"> & {
  rateLimit: Pick<AppConfig["rateLimit"], "keySecret" | "store">;
};

/**
 * The account rooms of a Gatehouse: each store of what an account has (its locks, known devices,
 * sessions, events, passkeys, factors, pending sign-ins, emailed links) and the keys its locks go by.
 */
export type AccountsRoom = {
  lockouts: LockoutRepository;
  devices: KnownDevices;
  /** Browser sessions' server records: a session cookie is only as live as its row. */
  sessions: BrowserSessions;
  events: SecurityEvents;
  passkeys: Passkeys;
  /** The relying party and the challenges of every WebAuthn ceremony (single-use through `replays`). */
  passkeySettings: PasskeySettings;
  /** Authenticator apps, recovery codes and "a passkey after the password". */
  factors: Factors;
  /** Right passwords waiting for their second step. */
  pendingSignIns: PendingSignIns;
  emailTokens: EmailTokens;
  /** The lockout key of a normalised username: a digest, so the table holds no usernames. */
  usernameKey(email: string): string;
  /** The lockout key of one known device. */
  deviceLockKey(deviceId: string): string;
  /** The second step's lock: an account's, or a known device's (wrong mailed device codes count on the strangers' lock). */
  secondFactorLockKey(subject: { userId: string } | { deviceId: string }): string;
};

type Deps = { database: Database; clock: () => number; log: Logger; brand: Brand; replays: ReplayStore };

export function buildAccounts(settings: Settings, deps: Deps): AccountsRoom {
  const { prisma, sql } = deps.database;
  const keySecret = settings.rateLimit.keySecret;
  return {
    lockouts: sqlLockoutRepository(sql),
    devices: sqlKnownDevices(sql, { secret: settings.devices.cookieSecret, lifetimeMs: settings.devices.cookieLifetimeMs }),
    sessions: prismaBrowserSessions(prisma, sql),
    events: prismaSecurityEvents(
      prisma,
      sql,
      deps.clock,
      (error) => deps.log.warn({ event: "security_event_not_recorded", err: String(error) }),
      settings.webhooks !== null,
    ),
    passkeys: prismaPasskeys(prisma),
    passkeySettings: passkeySettings(settings, deps.brand, deps.replays),
    factors: prismaFactors(prisma, sql, { seal: sealKeyOf(settings.factors.secret), recoveryCodes: settings.factors.secret }),
    pendingSignIns: prismaPendingSignIns(prisma),
    emailTokens: prismaEmailTokens(prisma),
    usernameKey: (email) => digestKey(keySecret, ["lockout", email]),
    deviceLockKey: (deviceId) => digestKey(keySecret, ["device-lockout", deviceId]),
    secondFactorLockKey: (subject) =>
      digestKey(keySecret, "userId" in subject ? ["second-factor", subject.userId] : ["second-factor-device", subject.deviceId]),
  };
}

function passkeySettings(settings: Settings, brand: Brand, replays: ReplayStore): PasskeySettings {
  return {
    rp: relyingParty(appOrigin(settings.http.publicUrl), brand.name),
    // The memory replay store forgets what was spent at a restart: a challenge issued before one
    // must not verify after it, so a single instance signs with a key of this process's own.
    challengeSecret:
      settings.rateLimit.store === "memory"
        ? `${settings.passkeys.challengeSecret}:${randomBytes(16).toString("hex")}`
        : settings.passkeys.challengeSecret,
    challengeLifetimeMs: 5 * 60_000,
    replays,
  };
}
