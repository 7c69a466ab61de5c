import type { PrismaClient } from "@/lib/generated/prisma/client";
import { deviceIdOf, newDeviceId, signDeviceToken, verifyDeviceToken } from "./device-token";

/** A device recognised for the username it signs in as. */
export type KnownDevice = { id: string };

/** Devices kept per username; the oldest beyond this are forgotten when a new one is issued. */
const MAX_DEVICES_PER_USERNAME = 20;

/**
 * The server half of OWASP device cookies: a token verifies only if its MAC holds for the
 * username and its row still exists (deleting the row revokes it). Anything that does not verify
 * is treated as an untrusted client, never as an error.
 */
export interface KnownDevices {
  recognise(token: string | null | undefined, usernameKey: string, nowMs: number): Promise<KnownDevice | null>;
  /** Whether a token is any live device at all (no username: the challenge size). */
  isKnown(token: string | null | undefined, nowMs: number): Promise<boolean>;
  /** A new device for the username, and the token to hand its client. */
  issue(usernameKey: string, nowMs: number): Promise<{ id: string; token: string; expiresAtMs: number }>;
  /**
   * Takes the device for one sign-in, atomically; false while another sign-in holds it. The
   * claim lapses after `forMs`, so a request that dies does not strand the device.
   */
  claim(id: string, nowMs: number, forMs: number): Promise<boolean>;
  release(id: string): Promise<void>;
  forget(id: string): Promise<void>;
  /** Revokes every device of a username (password change or reset, sign out everywhere). */
  forgetAll(usernameKey: string): Promise<number>;
}

export function prismaKnownDevices(prisma: PrismaClient, options: { secret: string; lifetimeMs: number }): KnownDevices {
  async function live(id: string, nowMs: number) {
    const row = await prisma.knownDevice.findUnique({ where: { id }, select: { usernameKey: true, expiresAt: true } });
    return row && row.expiresAt.getTime() > nowMs ? row : null;
  }

  return {
    async recognise(token, usernameKey, nowMs) {
      const verified = verifyDeviceToken(options.secret, token, usernameKey, nowMs);
      if (!verified) return null;
      const row = await live(verified.id, nowMs);
      return row?.usernameKey === usernameKey ? { id: verified.id } : null;
    },

    async isKnown(token, nowMs) {
      const id = deviceIdOf(token);
      if (!id) return false;
      // Only a kindness (the base challenge size), so the database being away means "not known".
      const row = await live(id, nowMs).catch(() => null);
      return row !== null && verifyDeviceToken(options.secret, token, row.usernameKey, nowMs) !== null;
    },

    async issue(usernameKey, nowMs) {
      const id = newDeviceId();
      const expiresAtMs = nowMs + options.lifetimeMs;
      await prisma.knownDevice.create({ data: { id, usernameKey, expiresAt: new Date(expiresAtMs), createdAt: new Date(nowMs) } });
      // This table cleans up after itself: a username's expired devices and all but its newest.
      const keep = await prisma.knownDevice.findMany({
        where: { usernameKey, expiresAt: { gt: new Date(nowMs) } },
        orderBy: { createdAt: "desc" },
        take: MAX_DEVICES_PER_USERNAME,
        select: { id: true },
      });
      await prisma.knownDevice.deleteMany({ where: { usernameKey, id: { notIn: keep.map((row) => row.id) } } });
      return { id, token: signDeviceToken(options.secret, { id, expiresAtMs }, usernameKey), expiresAtMs };
    },

    async claim(id, nowMs, forMs) {
      const { count } = await prisma.knownDevice.updateMany({
        where: { id, expiresAt: { gt: new Date(nowMs) }, OR: [{ claimedUntil: null }, { claimedUntil: { lte: new Date(nowMs) } }] },
        data: { claimedUntil: new Date(nowMs + forMs) },
      });
      return count === 1;
    },

    async release(id) {
      await prisma.knownDevice.updateMany({ where: { id }, data: { claimedUntil: null } });
    },

    async forget(id) {
      await prisma.knownDevice.deleteMany({ where: { id } });
    },

    async forgetAll(usernameKey) {
      return (await prisma.knownDevice.deleteMany({ where: { usernameKey } })).count;
    },
  };
}
