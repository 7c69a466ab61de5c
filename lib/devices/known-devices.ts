import { LEASE_COMMIT, msToUtc, utcToMs, type Sql } from "@/lib/db/sql";
import { writeTogether, type Writes } from "@/lib/db/one-statement";
import type { RememberGrant } from "./remember";
import { deviceIdOf, doorCheckedDeviceId, newDeviceId, signDeviceToken, verifyDeviceToken } from "./device-token";

/** A device recognised for the username it signs in as. */
export type KnownDevice = { id: string };

/** A known device one sign-in holds: its claim's stamp is what releases it. */
export type ClaimedDevice = KnownDevice & { claimedUntilMs: number };

/** A device just issued: the token its client keeps. */
export type IssuedDevice = { id: string; token: string; expiresAtMs: number };

/** Where a device signed in from, for the owner's list: its browser family and truncated address. */
export type DeviceOrigin = { label: string; address: string };

/** A live device as the account page lists it; `firstSeenAt` is null for a device older than the list. */
export type ListedDevice = { id: string; label: string | null; address: string | null; firstSeenAt: Date | null; lastSeenAt: Date };

/** Devices kept per username; the oldest beyond this are forgotten when a new one is issued. */
const MAX_DEVICES_PER_USERNAME = 20;

/**
 * The server half of OWASP device cookies: a token verifies only if its MAC holds for the
 * username and its row still exists (deleting the row revokes it). Anything that does not verify
 * is treated as an untrusted client, never as an error.
 */
export interface KnownDevices {
  recognise(token: string | null | undefined, usernameKey: string, nowMs: number): Promise<KnownDevice | null>;
  /**
   * The device a token names for the username, by its MAC and expiry alone, with no read: whether
   * it is still live (not revoked, not replaced) is what its `claim` finds out.
   */
  signed(token: string | null | undefined, usernameKey: string, nowMs: number): KnownDevice | null;
  /**
   * The id a token names when its username-free signature holds and it has not expired: a device
   * this server issued, to some account, some time (the owner's lane before the body names one).
   */
  doorChecked(token: string | null | undefined, nowMs: number): string | null;
  /** Whether a token is any live device at all (no username: the challenge size). */
  isKnown(token: string | null | undefined, nowMs: number): Promise<boolean>;
  /**
   * A new device for the username, and the token to hand its client; `replacing` (the device
   * that just signed in) is forgotten in the same statement.
   */
  issue(usernameKey: string, nowMs: number, replacing?: string, origin?: DeviceOrigin): Promise<IssuedDevice>;
  /**
   * `issue`'s writes, for a caller that writes them with other tables' in one statement
   * (lib/db/one-statement.ts): the device exists, and its token verifies, once they are written.
   */
  issuing(
    usernameKey: string,
    nowMs: number,
    replacing?: string,
    origin?: DeviceOrigin,
    remember?: RememberGrant,
  ): { writes: Writes; device: IssuedDevice };
  /**
   * Takes a live device of the username for one sign-in, atomically: "in_use" while another
   * sign-in holds it, "gone" once it is revoked, replaced, expired or not the username's. The
   * claim lapses after `forMs`, so a request that dies does not strand the device. Its stamp,
   * `nowMs + forMs`, is what `release` takes.
   */
  claim(id: string, usernameKey: string, nowMs: number, forMs: number): Promise<"claimed" | "in_use" | "gone">;
  /**
   * Ends the claim stamped `claimedUntilMs`, and only that one: a sign-in that stalled past its
   * claim must not free the device from the sign-in that claimed it after the lapse.
   */
  release(id: string, claimedUntilMs: number): Promise<void>;
  forget(id: string): Promise<void>;
  /** Revokes every device of a username (password change or reset, sign out everywhere). */
  forgetAll(usernameKey: string): Promise<number>;
  /** The username's live devices, the latest sign-in first (the account page's list). */
  listOf(usernameKey: string, nowMs: number): Promise<ListedDevice[]>;
  /**
   * The owner forgets one of their devices: deleted only if it is the username's, so another
   * account's id changes nothing. Whether it was there to forget.
   */
  forgetOwn(id: string, usernameKey: string): Promise<boolean>;
  /**
   * Until when the username's live device `id` holds a "Remember this browser" grant whose digest
   * is `digest`, or null (docs/decisions/0033): the grant is the row's, so it goes with the row.
   */
  remembered(id: string, usernameKey: string, digest: string, nowMs: number): Promise<number | null>;
  /** Gives the username's device `id` a grant (a second step just passed by code or passkey). */
  remember(id: string, usernameKey: string, grant: RememberGrant): Promise<boolean>;
  /** Ends every grant of the username's devices (a factor changed, "sign out everywhere"). */
  forgetRemembered(usernameKey: string): Promise<number>;
}

/** The KnownDevice table, in SQL straight to the driver: a known device's sign-in reads and writes it. */
export function sqlKnownDevices(sql: Sql, options: { secret: string; lifetimeMs: number }): KnownDevices {
  async function live(id: string, nowMs: number) {
    const [row] = await sql.rows<{ usernameKey: string }>(
      `SELECT "usernameKey" FROM "KnownDevice" WHERE "id" = $1 AND "expiresAt" > ${msToUtc("$2")}`,
      [id, nowMs],
    );
    return row ?? null;
  }

  const signed: KnownDevices["signed"] = (token, usernameKey, nowMs) => {
    const verified = verifyDeviceToken(options.secret, token, usernameKey, nowMs);
    return verified ? { id: verified.id } : null;
  };

  const issuing: KnownDevices["issuing"] = (usernameKey, nowMs, replacing, origin, remember) => {
    const id = newDeviceId();
    const expiresAtMs = nowMs + options.lifetimeMs;
    // The new device, the one it replaces gone (only ever a device of this username), and this
    // table cleaning up after itself (a username's expired devices and all but its newest). In
    // one statement the DELETE sees the table as it was before the INSERT, so it keeps the
    // newest MAX - 1 live ones besides the new device.
    const writes: Writes = (param, when) => {
      const key = param(usernameKey);
      const now = msToUtc(param(nowMs));
      // An id no device has: nothing is replaced.
      const old = param(replacing ?? "");
      // The device it replaces is the same device signing in again: its first sighting, and what
      // it was when this sign-in does not say, carry over (the statement still sees the old row).
      const replaced = (column: string) => `(SELECT "${column}" FROM "KnownDevice" WHERE "id" = ${old} AND "usernameKey" = ${key})`;
      // A "Remember this browser" grant goes with the device it was given to (the row that replaces
      // it), unless this sign-in brings a new one (it rotates at every use).
      const grant = remember
        ? { digest: param(remember.digest), until: msToUtc(param(remember.untilMs)) }
        : { digest: replaced("rememberDigest"), until: replaced("rememberUntil") };
      return [
        `INSERT INTO "KnownDevice" ("id", "usernameKey", "expiresAt", "createdAt", "firstSeenAt", "label", "address", "rememberDigest", "rememberUntil")
         SELECT ${param(id)}, ${key}, ${msToUtc(param(expiresAtMs))}, ${now}, COALESCE(${replaced("firstSeenAt")}, ${now}),
           COALESCE(${param(origin?.label ?? null)}, ${replaced("label")}), COALESCE(${param(origin?.address ?? null)}, ${replaced("address")}),
           ${grant.digest}, ${grant.until}
         WHERE ${when}`,
        `DELETE FROM "KnownDevice" WHERE (("id" = ${old} AND "usernameKey" = ${key}) OR ("usernameKey" = ${key} AND "id" NOT IN (
           SELECT "id" FROM "KnownDevice" WHERE "usernameKey" = ${key} AND "expiresAt" > ${now} AND "id" <> ${old}
           ORDER BY "createdAt" DESC LIMIT ${param(MAX_DEVICES_PER_USERNAME - 1)}::int
         ))) AND ${when}`,
      ];
    };
    return { writes, device: { id, token: signDeviceToken(options.secret, { id, expiresAtMs }, usernameKey), expiresAtMs } };
  };

  return {
    signed,

    doorChecked: (token, nowMs) => doorCheckedDeviceId(options.secret, token, nowMs),

    async recognise(token, usernameKey, nowMs) {
      const device = signed(token, usernameKey, nowMs);
      if (!device) return null;
      const row = await live(device.id, nowMs);
      return row?.usernameKey === usernameKey ? device : null;
    },

    async isKnown(token, nowMs) {
      const id = deviceIdOf(token);
      if (!id) return false;
      // Only a kindness (the base challenge size), so the database being away means "not known".
      const row = await live(id, nowMs).catch(() => null);
      return row !== null && verifyDeviceToken(options.secret, token, row.usernameKey, nowMs) !== null;
    },

    issuing,

    async issue(usernameKey, nowMs, replacing, origin) {
      const { writes, device } = issuing(usernameKey, nowMs, replacing, origin);
      await writeTogether(sql, writes);
      return device;
    },

    async claim(id, usernameKey, nowMs, forMs) {
      // A lease: lost in a crash of the database, it lets one more sign-in beside its holder (record 18).
      const claimed = await sql.run(
        `UPDATE "KnownDevice" SET "claimedUntil" = ${msToUtc("$1")} FROM ${LEASE_COMMIT}
         WHERE "id" = $2 AND "usernameKey" = $4 AND "expiresAt" > ${msToUtc("$3")}
           AND ("claimedUntil" IS NULL OR "claimedUntil" <= ${msToUtc("$3")})`,
        [nowMs + forMs, id, nowMs, usernameKey],
      );
      if (claimed === 1) return "claimed";
      // Only a claim that missed reads again, to tell a device in use from one that is gone.
      const row = await live(id, nowMs);
      return row?.usernameKey === usernameKey ? "in_use" : "gone";
    },

    async release(id, claimedUntilMs) {
      // Stamps are unique per device: a claim is only taken at or after the last one's stamp.
      await sql.run(`UPDATE "KnownDevice" SET "claimedUntil" = NULL WHERE "id" = $1 AND "claimedUntil" = ${msToUtc("$2")}`, [
        id,
        claimedUntilMs,
      ]);
    },

    async forget(id) {
      await sql.run(`DELETE FROM "KnownDevice" WHERE "id" = $1`, [id]);
    },

    async forgetAll(usernameKey) {
      return sql.run(`DELETE FROM "KnownDevice" WHERE "usernameKey" = $1`, [usernameKey]);
    },

    async listOf(usernameKey, nowMs) {
      const rows = await sql.rows<{ id: string; label: string | null; address: string | null; firstMs: number | null; lastMs: number }>(
        `SELECT "id", "label", "address", ${utcToMs(`"firstSeenAt"`)} AS "firstMs", ${utcToMs(`"createdAt"`)} AS "lastMs"
         FROM "KnownDevice" WHERE "usernameKey" = $1 AND "expiresAt" > ${msToUtc("$2")} ORDER BY "createdAt" DESC, "id"`,
        [usernameKey, nowMs],
      );
      return rows.map(({ firstMs, lastMs, ...row }) => ({
        ...row,
        firstSeenAt: firstMs === null ? null : new Date(firstMs),
        lastSeenAt: new Date(lastMs),
      }));
    },

    async forgetOwn(id, usernameKey) {
      return (await sql.run(`DELETE FROM "KnownDevice" WHERE "id" = $1 AND "usernameKey" = $2`, [id, usernameKey])) === 1;
    },

    async remembered(id, usernameKey, digest, nowMs) {
      const [row] = await sql.rows<{ untilMs: number }>(
        `SELECT ${utcToMs(`"rememberUntil"`)} AS "untilMs" FROM "KnownDevice" WHERE "id" = $1 AND "usernameKey" = $2
           AND "rememberDigest" = $3 AND "rememberUntil" > ${msToUtc("$4")} AND "expiresAt" > ${msToUtc("$4")}`,
        [id, usernameKey, digest, nowMs],
      );
      return row ? Number(row.untilMs) : null;
    },

    async remember(id, usernameKey, grant) {
      const updated = await sql.run(
        `UPDATE "KnownDevice" SET "rememberDigest" = $3, "rememberUntil" = ${msToUtc("$4")} WHERE "id" = $1 AND "usernameKey" = $2`,
        [id, usernameKey, grant.digest, grant.untilMs],
      );
      return updated === 1;
    },

    async forgetRemembered(usernameKey) {
      return sql.run(
        `UPDATE "KnownDevice" SET "rememberDigest" = NULL, "rememberUntil" = NULL WHERE "usernameKey" = $1 AND "rememberDigest" IS NOT NULL`,
        [usernameKey],
      );
    },
  };
}
