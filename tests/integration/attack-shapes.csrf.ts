import { beforeAll, describe, expect, it } from "vitest";
import { sessionFormToken } from "@/lib/http/form-token";
import {
  browserSignIn,
  browserSignOut,
  createAccount,
  sessionCookieOf,
  sessionIdOf,
  sessionWith,
  signedInBrowser,
} from "../helpers/browser";

type Gate = import("@/lib/app").Gatehouse;
type Checks = { verified(): number };

const PASSWORD = "the right passphrase";
const APP = "http://localhost:3000";

/**
 * The one CSRF rule (lib/http/csrf.ts, issue 56) as another site would try it: a post from
 * another origin with and without a session, a missing or forged form token, the token field
 * twice, and a body of another media type. Each is a 4xx that verifies no password and ends no
 * session.
 */
export function csrfShapes(current: () => { gate: Gate; checks: Checks }) {
  const checks = () => current().checks;

  describe("one CSRF rule (issue 56)", () => {
    beforeAll(async () => {
      for (const name of ["csrf-in", "csrf-out"]) await createAccount(current().gate, `${name}@example.com`, PASSWORD);
    });

    const refused = async (res: Response) => {
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: "csrf_invalid", message: "This page has expired. Reload it and try again." });
      expect(sessionCookieOf(res)).toBeNull();
    };
    const formTokenOf = async (cookie: string) =>
      sessionFormToken(current().gate.config.session.secret, await sessionIdOf(current().gate, cookie));
    const live = async (cookie: string) =>
      expect((await sessionWith(cookie)).body).toMatchObject({ user: { email: "csrf-out@example.com" } });

    describe("a sign-in (no session yet): from the app's own pages only", () => {
      it.each([
        ["another site (Fetch Metadata)", { "sec-fetch-site": "cross-site" }],
        ["a sibling subdomain", { "sec-fetch-site": "same-site" }],
        ["a typed URL or bookmark", { "sec-fetch-site": "none" }],
        ["another origin (no Fetch Metadata)", { origin: "https://evil.example" }],
        ["an origin that only starts as the app's", { origin: "http://localhost:3000.evil.example" }],
        ["the app's host under another scheme", { origin: "https://localhost:3000" }],
        ["an opaque origin", { origin: "null" }],
      ])("refuses a post from %s with 403, verifying nothing", async (_from, headers) => {
        await refused(await browserSignIn("csrf-in@example.com", PASSWORD, { headers }));
        expect(checks().verified()).toBe(0);
      });

      it("refuses a post that says neither where it comes from (a non-browser client uses the token API)", async () => {
        await refused(await browserSignIn("csrf-in@example.com", PASSWORD, { headers: { origin: "" } }));
        expect(checks().verified()).toBe(0);
      });

      it("takes the app's exact Origin from a browser without Fetch Metadata, and needs no token round trip", async () => {
        const res = await browserSignIn("csrf-in@example.com", PASSWORD, { headers: { origin: APP } });
        expect(res.status).toBe(200);
        expect(sessionCookieOf(res)).not.toBeNull();
      });

      it("ignores an old client's next-auth csrfToken field: it is no part of the rule, either way", async () => {
        const res = await browserSignIn("csrf-in@example.com", PASSWORD, { fields: { csrfToken: "anything" } });
        expect(res.status).toBe(200);
        await refused(
          await browserSignIn("csrf-in@example.com", PASSWORD, {
            fields: { csrfToken: "anything" },
            headers: { "sec-fetch-site": "cross-site" },
          }),
        );
      });
    });

    describe("a sign-out (a session exists): from the app's own pages, with the session's form token", () => {
      let cookie: string;
      beforeAll(async () => {
        cookie = await signedInBrowser("csrf-out@example.com", PASSWORD);
      });

      it("refuses a post from another site, even with the right form token, and the session lives on", async () => {
        await refused(await browserSignOut(cookie, { headers: { "sec-fetch-site": "cross-site" } }));
        await refused(await browserSignOut(cookie, { headers: { origin: "https://evil.example" } }));
        await live(cookie);
      });

      it("refuses a same-origin post without the form token, or with a forged one", async () => {
        const other = await signedInBrowser("csrf-in@example.com", PASSWORD);
        for (const formToken of ["", "forged", "A".repeat(43), "A".repeat(5_000)]) {
          await refused(await browserSignOut(cookie, { fields: { formToken } }));
        }
        // The token of another session (another browser of another account) is worth nothing here.
        const foreign = await formTokenOf(other);
        await refused(await browserSignOut(cookie, { fields: { formToken: foreign } }));
        await refused(await browserSignOut(cookie, { body: new URLSearchParams({ callbackUrl: "/", json: "true" }).toString() }));
        await live(cookie);
      });

      it("refuses the form token field twice (400), even when one of them is right", async () => {
        const right = await formTokenOf(cookie);
        for (const pair of [
          [right, "forged"],
          ["forged", right],
          [right, right],
        ]) {
          const body = new URLSearchParams([...pair.map((token) => ["formToken", token]), ["json", "true"]]).toString();
          const res = await browserSignOut(cookie, { body });
          expect(res.status).toBe(400);
          expect(await res.json()).toMatchObject({ error: "invalid_input" });
        }
        await live(cookie);
      });

      it.each(["text/plain", "application/json", "multipart/form-data; boundary=x", ""])(
        "refuses a body of type %j (415): a form is the one shape the rule reads",
        async (contentType) => {
          const formToken = await formTokenOf(cookie);
          const body =
            contentType === "application/json" ? JSON.stringify({ formToken, json: "true" }) : `formToken=${formToken}&json=true`;
          const res = await browserSignOut(cookie, { contentType, body });
          expect(res.status).toBe(415);
          await live(cookie);
        },
      );

      it("signs out with the form token from the app's own page, by Fetch Metadata or by exact Origin", async () => {
        expect((await browserSignOut(cookie, { headers: { origin: APP } })).status).toBe(200);
        expect((await sessionWith(cookie)).body).toEqual({});
      });

      it("clears a cookie that holds no session with no token to check: there is nothing to protect", async () => {
        const res = await browserSignOut("next-auth.session-token=not-a-jwt", {
          body: new URLSearchParams({ callbackUrl: "/", json: "true" }).toString(),
        });
        expect(res.status).toBe(200);
        await refused(
          await browserSignOut("next-auth.session-token=not-a-jwt", {
            body: new URLSearchParams({ json: "true" }).toString(),
            headers: { "sec-fetch-site": "cross-site" },
          }),
        );
      });
    });
  });
}
