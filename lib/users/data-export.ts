import type { KnownDevices } from "@/lib/devices/known-devices";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/** The format's version: a reader can tell what a file holds. */
export const DATA_EXPORT_VERSION = 1;

const iso = (date: Date | null) => date?.toISOString() ?? null;

/**
 * "Download my data" (GDPR articles 15 and 20): what Gatehouse keeps about the account, as JSON.
 * Every field is named here, chosen one by one (never a whole row), so that no secret can slip
 * in: no password hash, TOTP secret, recovery-code or token digest, no session, device or
 * credential id (each is half of something that signs in), and no public key.
 */
export async function exportAccountData(
  prisma: PrismaClient,
  devices: Pick<KnownDevices, "listOf">,
  account: { userId: string; usernameKey: string; currentSid: string },
  nowMs: number,
) {
  const { userId } = account;
  const user = await prisma.user.findUnique({
    where: { id: userId },
    select: {
      email: true,
      emailVerifiedAt: true,
      firstSignedInAt: true,
      createdAt: true,
      updatedAt: true,
      locale: true,
      lastLocale: true,
      timeZone: true,
      passkeySecondFactor: true,
      passwordBreachedAt: true,
    },
  });
  if (!user) return null;
  const [sessions, families, known, passkeys, totp, recoveryCodes, events, reports] = await Promise.all([
    prisma.browserSession.findMany({
      where: { userId },
      orderBy: { createdAt: "desc" },
      select: { id: true, browser: true, address: true, createdAt: true, lastSeenAt: true, expiresAt: true, revokedAt: true },
    }),
    prisma.refreshToken.findMany({
      where: { userId },
      orderBy: { familyCreatedAt: "desc" },
      distinct: ["familyId"],
      select: { client: true, address: true, familyCreatedAt: true, familyExpiresAt: true, revokedAt: true },
    }),
    devices.listOf(account.usernameKey, nowMs),
    prisma.passkey.findMany({
      where: { userId },
      orderBy: { createdAt: "asc" },
      select: { name: true, createdAt: true, lastUsedAt: true, deviceType: true, backedUp: true },
    }),
    prisma.totpFactor.findUnique({ where: { userId }, select: { createdAt: true, enabledAt: true } }),
    prisma.recoveryCode.findMany({ where: { userId }, orderBy: { createdAt: "asc" }, select: { createdAt: true, usedAt: true } }),
    prisma.securityEvent.findMany({
      where: { userId },
      orderBy: { createdAt: "desc" },
      select: { kind: true, address: true, browser: true, createdAt: true },
    }),
    prisma.report.findMany({ where: { userId }, orderBy: { createdAt: "desc" }, select: { createdAt: true, content: true } }),
  ]);
  return {
    format: "gatehouse-account-data",
    version: DATA_EXPORT_VERSION,
    exportedAt: new Date(nowMs).toISOString(),
    account: {
      email: user.email,
      emailConfirmedAt: iso(user.emailVerifiedAt),
      createdAt: iso(user.createdAt),
      updatedAt: iso(user.updatedAt),
      firstSignedInAt: iso(user.firstSignedInAt),
      language: user.lastLocale ?? user.locale,
      timeZone: user.timeZone,
      passwordFoundBreachedAt: iso(user.passwordBreachedAt),
    },
    browserSessions: sessions.map((session) => ({
      browser: session.browser,
      network: session.address,
      signedInAt: iso(session.createdAt),
      lastActiveAt: iso(session.lastSeenAt),
      endsAt: iso(session.expiresAt),
      revokedAt: iso(session.revokedAt),
      thisBrowser: session.id === account.currentSid,
    })),
    apiSessions: families.map((family) => ({
      client: family.client,
      network: family.address,
      signedInAt: iso(family.familyCreatedAt),
      endsAt: iso(family.familyExpiresAt),
      revokedAt: iso(family.revokedAt),
    })),
    knownDevices: known.map((device) => ({
      device: device.label,
      network: device.address,
      firstSeenAt: iso(device.firstSeenAt),
      lastSignedInAt: iso(device.lastSeenAt),
    })),
    passkeys: passkeys.map((passkey) => ({
      name: passkey.name,
      addedAt: iso(passkey.createdAt),
      lastUsedAt: iso(passkey.lastUsedAt),
      synced: passkey.deviceType === "multiDevice",
      backedUp: passkey.backedUp,
    })),
    factors: {
      passkeyAfterPassword: user.passkeySecondFactor,
      authenticatorApp: totp ? { addedAt: iso(totp.createdAt), turnedOnAt: iso(totp.enabledAt) } : null,
      recoveryCodes: recoveryCodes.map((code) => ({ madeAt: iso(code.createdAt), usedAt: iso(code.usedAt) })),
    },
    securityEvents: events.map((event) => ({ kind: event.kind, at: iso(event.createdAt), network: event.address, browser: event.browser })),
    reports: reports.map((report) => ({ createdAt: iso(report.createdAt), content: report.content })),
  };
}
