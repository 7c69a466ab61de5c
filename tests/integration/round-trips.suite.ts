import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSignIn, createAccount, deviceCookieOf, sessionCookieOf } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader } from "../helpers/peer";
import { RoundTrips } from "../helpers/round-trips";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const DEVICE_COOKIE = "gatehouse-device";

// What a successful browser sign-in may send to the database, from the request to the session
// cookie (issue 28: each round trip waits behind every other request's on PGlite's one thread).
// Before issue 28 they were 27 from a known device and 22 from a new one: the lockout's count as
// an interactive transaction (5), Prisma's BEGIN and COMMIT around single UPDATEs (the device's
// claim, the first-sign-in mark), a device and a session each written and then pruned apart;
// then 17 and 14, before the factor summary became one statement (it was four), the device that
// signed in was replaced in the statement that issues the new one, and the first-sign-in mark was
// read with the password hash instead of written on every sign-in; then 12 and 10, before the
// lockout's count started from the check's read, the factor summary was read with the password
// hash, and the known device's own lock was no longer reset just before the device is replaced;
// then 9 and 8, before the device was read only by its claim, after the ALTCHA, and a known
// device's lock was counted, with no check before, in the statement that reads the strangers' lock;
// then 6 and 8, before the new device, the "signed in" event and the session were written in one
// statement (lib/db/one-statement.ts).
const KNOWN_DEVICE_MAX = 4;
// A new device's is 5 of its own; its notice mail, rendered in the background meanwhile, reads the
// account and writes the "This wasn't me" link (issue 57), and may fall inside the count.
const NEW_DEVICE_MAX = 7;

/**
 * How many statements a successful sign-in sends, counted at the driver adapter through the real
 * route handlers. Not a timed test: the count is what the code does, on any machine.
 */
export function roundTripsSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`round trips of a sign-in on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    const trips = new RoundTrips();

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, {}, { wrapAdapter: trips.wrap, wrapSql: trips.wrapSql });
      await createAccount(gate, "owner@example.com", PASSWORD);
      await createAccount(gate, "newcomer@example.com", PASSWORD);
      // Each account's first sign-in is its own kind (the first-sign-in mark); the counts below are for later ones.
      for (const email of ["owner@example.com", "newcomer@example.com"]) expect((await browserSignIn(email, PASSWORD)).status).toBe(200);
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    it("from a known device: a session and a new device cookie in a bounded number of statements", async () => {
      const first = await browserSignIn("owner@example.com", PASSWORD);
      const device = deviceCookieOf(first)!;
      let res: Response | undefined;
      // What earlier sign-ins left in the background (their notice mails) is not this one's.
      await gate.background.idle();
      const counted = await trips.during(async () => {
        res = await browserSignIn("owner@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` });
      });
      expect(res!.status).toBe(200);
      expect(sessionCookieOf(res!)).not.toBeNull();
      expect(deviceCookieOf(res!)).not.toBe(device);
      expect(counted.count, counted.statements.join("\n")).toBeLessThanOrEqual(KNOWN_DEVICE_MAX);
    });

    it("from a new device: a session and a device cookie in a bounded number of statements", async () => {
      let res: Response | undefined;
      // What earlier sign-ins left in the background (their notice mails) is not this one's.
      await gate.background.idle();
      const counted = await trips.during(async () => {
        res = await browserSignIn("newcomer@example.com", PASSWORD);
      });
      expect(res!.status).toBe(200);
      expect(sessionCookieOf(res!)).not.toBeNull();
      expect(deviceCookieOf(res!)).not.toBeNull();
      expect(counted.count, counted.statements.join("\n")).toBeLessThanOrEqual(NEW_DEVICE_MAX);
    });
  });
}

onEachDatabase("round trips", ({ label, makeDatabase }) => roundTripsSuite(label, makeDatabase));
