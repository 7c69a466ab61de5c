import type { Gatehouse } from "@/lib/gatehouse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSignIn, createAccount, sessionPairOf } from "../helpers/browser";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader } from "../helpers/peer";

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

/** The account page's events say which browser they came from and which one is "this device". */
describe("security events carry their origin", () => {
  let database: TestDatabase;
  let gate: Gatehouse;

  beforeAll(async () => {
    announcePeerHeader();
    database = await freshPglite();
    // A sign-in right after a failure, with no device confirmation in between (that has its own suite).
    gate = await servedGatehouse(database.url, { ALTCHA_MAX_COUNTER: "1000", NEW_DEVICE_CONFIRMATION: "off" });
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  it("labels a failure and a sign-in with the browser family, and the sign-in with the session it started", async () => {
    const userId = await createAccount(gate, "origin@example.com", "the right passphrase");
    expect((await browserSignIn("origin@example.com", "wrong guess", { userAgent: FIREFOX })).status).toBe(401);
    // A crafted User-Agent never reaches the page: only bowser's own names do.
    const signedIn = await browserSignIn("origin@example.com", "the right passphrase", {
      userAgent: "<script>alert(1)</script> Chrome/131.0",
    });
    expect(signedIn.status).toBe(200);

    const { decode } = await import("next-auth/jwt");
    const claims = await decode({ token: sessionPairOf(signedIn)!.split("=")[1]!, secret: gate.config.session.secret });
    const events = await gate.events.recent(userId);
    expect(events.map((event) => event.kind)).toEqual(["sign_in_succeeded", "sign_in_failed"]);
    expect(events[1]).toMatchObject({ browser: "Firefox on Linux", sessionId: null });
    expect(events[0]!.sessionId).toBe(claims!.sid);
    expect(events[0]!.browser).not.toContain("<");
    // The session the event names exists, as this browser's.
    expect(await gate.sessions.find(claims!.sid as string)).toMatchObject({ userId });
  });
});
