import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { accountFormPost, browserSignIn, createAccount, deviceCookieOf, sessionPairOf } from "../helpers/browser";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const FORGET = "/api/account/devices/forget";
const DATA = "/api/account/data";
const DELETE = "/api/account/delete";

/**
 * The account's whole life (issue 57) as an attacker would use it: a stolen session without a
 * fresh authentication, a replayed or doubled form post, another account's session, and another
 * account's ids. Each gets a clear 4xx and changes nothing.
 */
export function accountShapes(current: () => { gate: Gate }) {
  const gate = () => current().gate;

  describe("the account's whole life (issue 57)", () => {
    /** A fresh browser's sign-in: its session cookie and its known device's id. */
    async function signedIn(email: string) {
      const res = await browserSignIn(email, PASSWORD);
      expect(res.status).toBe(200);
      const id = gate().devices.signed(deviceCookieOf(res), gate().usernameKey(email), gate().clock())!.id;
      return { session: sessionPairOf(res)!, id };
    }

    const deviceIds = async (email: string) =>
      (await gate().devices.listOf(gate().usernameKey(email), gate().clock())).map((device) => device.id);

    const forgottenEvents = async (email: string) => {
      const user = await gate().prisma.user.findUniqueOrThrow({ where: { email } });
      return (await gate().events.recent(user.id, 50)).filter((event) => event.kind === "device_forgotten").length;
    };

    beforeAll(async () => {
      for (const name of [
        "devices-owner",
        "devices-intruder",
        "devices-stale",
        "devices-double",
        "data-owner",
        "data-other",
        "data-double",
        "delete-stale",
        "delete-double",
        "delete-victim",
        "delete-intruder",
      ])
        await createAccount(gate(), `${name}@example.com`, PASSWORD);
    });

    afterEach(() => vi.restoreAllMocks());

    describe("forget device", () => {
      it("a stolen session without a fresh authentication forgets nothing", async () => {
        const { session, id } = await signedIn("devices-stale@example.com");
        vi.spyOn(gate(), "clock").mockReturnValue(Date.now() + 11 * 60_000);
        const json = await accountFormPost(gate(), FORGET, session, { id, json: "true" });
        expect(json.status).toBe(401);
        expect(await json.json()).toMatchObject({ error: "reauthentication_required" });
        const form = await accountFormPost(gate(), FORGET, session, { id });
        expect(form.headers.get("location")).toBe("/account?notice=confirm_first");
        expect(await deviceIds("devices-stale@example.com")).toContain(id);
      });

      it("a replayed post finds nothing to forget the second time", async () => {
        const { session, id } = await signedIn("devices-owner@example.com");
        expect((await accountFormPost(gate(), FORGET, session, { id, json: "true" })).status).toBe(200);
        const replay = await accountFormPost(gate(), FORGET, session, { id, json: "true" });
        expect(replay.status).toBe(404);
        expect(await replay.json()).toMatchObject({ error: "not_found" });
      });

      it("a parallel double-submit forgets once and records once", async () => {
        const { session, id } = await signedIn("devices-double@example.com");
        const before = await forgottenEvents("devices-double@example.com");
        const answers = await Promise.all([0, 1].map(() => accountFormPost(gate(), FORGET, session, { id, json: "true" })));
        expect(answers.map((res) => res.status).sort()).toEqual([200, 404]);
        expect(await forgottenEvents("devices-double@example.com")).toBe(before + 1);
      });

      it("another account's session cannot forget the owner's device, and the owner's session cannot forget another's", async () => {
        const owner = await signedIn("devices-owner@example.com");
        const intruder = await signedIn("devices-intruder@example.com");
        const theirs = await accountFormPost(gate(), FORGET, intruder.session, { id: owner.id, json: "true" });
        expect(theirs.status).toBe(404);
        expect(await theirs.json()).toMatchObject({ error: "not_found" });
        const mine = await accountFormPost(gate(), FORGET, owner.session, { id: intruder.id, json: "true" });
        expect(mine.status).toBe(404);
        expect(await deviceIds("devices-owner@example.com")).toContain(owner.id);
        expect(await deviceIds("devices-intruder@example.com")).toContain(intruder.id);
      });

      it("no session, another site, a wrong form token or a malformed id: a 4xx JSON answer, and the device stays", async () => {
        const { session, id } = await signedIn("devices-intruder@example.com");
        const answers = [
          await accountFormPost(gate(), FORGET, session, { id }, { cookie: "" }),
          await accountFormPost(gate(), FORGET, session, { id }, { "sec-fetch-site": "cross-site" }),
          await accountFormPost(gate(), FORGET, session, { id, formToken: "forged" }),
          await accountFormPost(gate(), FORGET, session, { id: "../../etc/passwd" }),
          await accountFormPost(gate(), FORGET, session, { id: "x".repeat(65) }),
        ];
        expect(answers.map((res) => res.status)).toEqual([401, 403, 403, 400, 400]);
        for (const res of answers) expect(res.headers.get("content-type")).toMatch(/application\/json/);
        expect(await deviceIds("devices-intruder@example.com")).toContain(id);
      });
    });

    describe("download my data", () => {
      it("a stolen session without a fresh authentication gets no file", async () => {
        const { session } = await signedIn("data-owner@example.com");
        vi.spyOn(gate(), "clock").mockReturnValue(Date.now() + 11 * 60_000);
        const res = await accountFormPost(gate(), DATA, session, { json: "true" });
        expect(res.status).toBe(401);
        expect(res.headers.get("content-disposition")).toBeNull();
        expect(await res.json()).toMatchObject({ error: "reauthentication_required" });
      });

      it("a parallel double-submit gives one file; the replay after it is refused by the quota", async () => {
        const { session } = await signedIn("data-double@example.com");
        const answers = await Promise.all([0, 1].map(() => accountFormPost(gate(), DATA, session, {})));
        expect(answers.map((res) => res.status).sort()).toEqual([200, 429]);
        expect((await accountFormPost(gate(), DATA, session, {})).status).toBe(429);
      });

      it("another account's session downloads only its own account, and uses only its own quota", async () => {
        const other = await signedIn("data-other@example.com");
        const res = await accountFormPost(gate(), DATA, other.session, {});
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(JSON.parse(text)).toMatchObject({ account: { email: "data-other@example.com" } });
        expect(text).not.toContain("data-owner@example.com");
      });

      it("no session, another site or a wrong form token: a 4xx JSON answer and no file", async () => {
        const { session } = await signedIn("data-owner@example.com");
        const answers = [
          await accountFormPost(gate(), DATA, session, {}, { cookie: "" }),
          await accountFormPost(gate(), DATA, session, {}, { "sec-fetch-site": "cross-site" }),
          await accountFormPost(gate(), DATA, session, { formToken: "forged" }),
        ];
        expect(answers.map((res) => res.status)).toEqual([401, 403, 403]);
        for (const res of answers) expect(res.headers.get("content-disposition")).toBeNull();
      });
    });

    describe("delete account", () => {
      const exists = async (email: string) => (await gate().prisma.user.count({ where: { email } })) === 1;

      it("a stolen session without a fresh authentication deletes nothing, even with the address typed", async () => {
        const { session } = await signedIn("delete-stale@example.com");
        vi.spyOn(gate(), "clock").mockReturnValue(Date.now() + 11 * 60_000);
        const json = await accountFormPost(gate(), DELETE, session, { confirm: "delete-stale@example.com", json: "true" });
        expect(json.status).toBe(401);
        expect(await json.json()).toMatchObject({ error: "reauthentication_required" });
        const form = await accountFormPost(gate(), DELETE, session, { confirm: "delete-stale@example.com" });
        expect(form.headers.get("location")).toBe("/account?notice=confirm_first");
        expect(await exists("delete-stale@example.com")).toBe(true);
      });

      it("a parallel double-submit deletes once and says goodbye once; a replay finds no session", async () => {
        const { session } = await signedIn("delete-double@example.com");
        const sent: string[] = [];
        vi.spyOn(gate().mailer, "send").mockImplementation((message) => void sent.push(message.subject));
        const fields = { confirm: "delete-double@example.com", json: "true" };
        const answers = await Promise.all([0, 1].map(() => accountFormPost(gate(), DELETE, session, fields)));
        const statuses = answers.map((res) => res.status).sort();
        expect(statuses[0]).toBe(200);
        // The other found the account gone: at its session check (401) or at the delete itself (404).
        expect([401, 404]).toContain(statuses[1]);
        expect(await exists("delete-double@example.com")).toBe(false);
        await gate().background.idle();
        expect(sent.filter((subject) => /deleted/.test(subject))).toHaveLength(1);
        const replay = await accountFormPost(gate(), DELETE, session, fields);
        expect(replay.status).toBe(401);
        expect(await replay.json()).toMatchObject({ error: "unauthenticated" });
      });

      it("another account's session cannot delete the owner's account by typing the owner's address", async () => {
        const intruder = await signedIn("delete-intruder@example.com");
        const res = await accountFormPost(gate(), DELETE, intruder.session, { confirm: "delete-victim@example.com", json: "true" });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { confirm: expect.any(String) } });
        expect(await exists("delete-victim@example.com")).toBe(true);
        expect(await exists("delete-intruder@example.com")).toBe(true);
      });

      it("no session, another site, a wrong form token or an oversized field: a 4xx JSON answer and the account stays", async () => {
        const { session } = await signedIn("delete-victim@example.com");
        const confirm = "delete-victim@example.com";
        const answers = [
          await accountFormPost(gate(), DELETE, session, { confirm }, { cookie: "" }),
          await accountFormPost(gate(), DELETE, session, { confirm }, { "sec-fetch-site": "cross-site" }),
          await accountFormPost(gate(), DELETE, session, { confirm, formToken: "forged" }),
          await accountFormPost(gate(), DELETE, session, { confirm: "x".repeat(400) }),
          await accountFormPost(gate(), DELETE, session, {}),
        ];
        expect(answers.map((res) => res.status)).toEqual([401, 403, 403, 400, 400]);
        for (const res of answers) expect(res.headers.get("content-type")).toMatch(/application\/json/);
        expect(await exists("delete-victim@example.com")).toBe(true);
      });
    });
  });
}
