import { beforeAll, describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import { sessionFormToken } from "@/lib/http/form-token";
import { ruleAt } from "@/lib/http/route-policies";
import {
  altchaPayload,
  browserSignIn,
  browserSignOut,
  createAccount,
  sessionCookieOf,
  sessionIdOf,
  sessionWith,
  signedInBrowser,
  tokenSignIn,
} from "../helpers/browser";
import { freshAddress, PEER_HEADER } from "../helpers/peer";
import { apiTokenFor } from "../helpers/tokens";
import { pathOfRouteFile, routeFilesOnDisk } from "../helpers/route-paths";

type Gate = import("@/lib/app").Gatehouse;
type Checks = { verified(): number };

const PASSWORD = "the right passphrase";
const APP = "http://localhost:3000";
const CHANGING = ["POST", "PUT", "PATCH", "DELETE"] as const;
type Handler = (request: Request, context?: unknown) => Promise<Response>;

/** A JSON body that records whether anyone pulled it: a refusal "before the body is read" leaves it untouched. */
function watchedBody(value: unknown): { body: ReadableStream<Uint8Array>; read: () => boolean } {
  let pulled = false;
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled = true;
        controller.enqueue(bytes);
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return { body, read: () => pulled };
}

/** `method path` with a JSON body whose reading is watched, and `headers` (a cross-site browser's, say). */
function watchedRequest(method: string, path: string, value: unknown, headers: Record<string, string>) {
  const watched = watchedBody(value);
  // A NextRequest as Next.js passes it: wrapping a Request again would pipe (and so pull) its body.
  const request = new NextRequest(`http://localhost${path}`, {
    method,
    headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), ...headers },
    body: watched.body,
    duplex: "half",
  } as ConstructorParameters<typeof NextRequest>[1]);
  return { request, read: watched.read };
}

/** The params a dynamic segment gets in these tests (a real page name where the route checks it). */
const PARAMS = { form: "forgot-password", id: "3f1c2a9e-0000-4000-8000-000000000000", hash: "AAAAAAAAAAAAAAAA", rest: ["_log"] };

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

    describe("every state-changing handler under app/api: the rule runs before the route (limited, ROUTE_RULES)", () => {
      let cookie: string;
      beforeAll(async () => {
        cookie = await signedInBrowser("csrf-out@example.com", PASSWORD);
      });

      const handlers = routeFilesOnDisk().flatMap((file) => CHANGING.map((method) => ({ file, method, path: pathOfRouteFile(file) })));

      it("finds the route files (a test over none proves nothing)", () => {
        expect(handlers.length).toBeGreaterThan(4 * 50);
      });

      it.each([
        ["another site (Fetch Metadata)", { "sec-fetch-site": "cross-site" }],
        ["another origin (no Fetch Metadata)", { origin: "https://evil.example" }],
      ])("refuses a request from %s with the browser's cookie, 403 before its body is read", async (_from, headers) => {
        let refused = 0;
        for (const { file, method, path } of handlers) {
          const route = (await import(`@/${file.replace(/\.ts$/, "")}`)) as Partial<Record<string, Handler>>;
          const handler = route[method];
          if (!handler) continue;
          // Only a route that says why may take another site's request (the 404 of unused paths, CSP reports).
          if (ruleAt(path).senders?.anySite) continue;
          const sent = watchedRequest(
            method,
            path.replace(/\[\.\.\.(\w+)\]|\[(\w+)\]/g, "x"),
            { email: "csrf-out@example.com" },
            {
              ...headers,
              cookie,
            },
          );
          const res = await handler(sent.request, { params: Promise.resolve(PARAMS) });
          expect(res.status, `${method} ${path}`).toBe(403);
          expect(((await res.json()) as { error: string }).error, `${method} ${path}`).toBe("csrf_invalid");
          expect(sent.read(), `${method} ${path} read the body`).toBe(false);
          refused++;
        }
        expect(refused).toBeGreaterThan(45);
        await live(cookie);
      });

      it("lets only the 404 of unused next-auth paths and CSP reports take any site's request", () => {
        const anySite = routeFilesOnDisk()
          .map(pathOfRouteFile)
          .filter((path) => ruleAt(path).senders?.anySite);
        expect(anySite.sort()).toEqual(["/api/auth/[...rest]", "/api/csp-report"]);
      });
    });

    describe("the posts no session stands behind: another site's, with a valid body, change nothing", () => {
      const crossSite = { "sec-fetch-site": "cross-site" };
      const route = async (path: string) => ((await import(`@/app${path}/route`)) as { POST: Handler }).POST;

      it("creates no account for another site's registration, and reads not even its address", async () => {
        const email = "csrf-register@example.com";
        const sent = watchedRequest("POST", "/api/register", { email, password: PASSWORD, altcha: await altchaPayload() }, crossSite);
        await refused(await (await route("/api/register"))(sent.request));
        expect(sent.read()).toBe(false);
        expect(await current().gate.prisma.user.count({ where: { email } })).toBe(0);
      });

      it.each(["/api/password/forgot", "/api/email/verification", "/api/unlock/request", "/api/register/passkey"])(
        "mails nothing for another site's %s: the address, in the body, is never read",
        async (path) => {
          const sent = watchedRequest("POST", path, { email: "csrf-in@example.com", altcha: await altchaPayload() }, crossSite);
          await refused(await (await route(path))(sent.request));
          expect(sent.read()).toBe(false);
        },
      );

      it("spends no emailed link for another site's button press: the owner's own press still works", async () => {
        const gate = current().gate;
        const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "csrf-in@example.com" } });
        const token = await gate.emailTokens.issue(user.id, "reset_password", user.credentialGeneration, Date.now(), 3_600_000);
        for (const path of ["/api/password/reset/preview", "/api/password/reset"]) {
          const sent = watchedRequest("POST", path, { token, password: "another right passphrase" }, crossSite);
          await refused(await (await route(path))(sent.request));
          expect(sent.read()).toBe(false);
        }
        expect(await gate.emailTokens.find(token, "reset_password", Date.now())).not.toBeNull();
      });

      it("issues no token pair for another site's request to the token API that carries the browser's cookie", async () => {
        const cookie = await signedInBrowser("csrf-in@example.com", PASSWORD);
        const verified = checks().verified();
        const before = await current().gate.prisma.refreshToken.count();
        const res = await tokenSignIn("csrf-in@example.com", PASSWORD, { headers: { cookie, "sec-fetch-site": "cross-site" } });
        expect(res.status).toBe(403);
        expect(await res.json()).toMatchObject({ error: "csrf_invalid" });
        expect(await current().gate.prisma.refreshToken.count()).toBe(before);
        expect(checks().verified()).toBe(verified);
      });

      it("keeps the token API open to apps: no cookie, whatever site or none (no ambient authority to borrow)", async () => {
        expect((await tokenSignIn("csrf-in@example.com", PASSWORD)).status).toBe(200);
        expect((await tokenSignIn("csrf-in@example.com", PASSWORD, { headers: { origin: "capacitor://localhost" } })).status).toBe(200);
      });

      it("takes a script's JSON that names no site or origin (no browser sends such a POST), and refuses it as anything else", async () => {
        const email = "csrf-script@example.com";
        const body = JSON.stringify({ email, password: PASSWORD, altcha: await altchaPayload() });
        const post = (type: string) =>
          new NextRequest("http://localhost/api/register", {
            method: "POST",
            headers: { "content-type": type, [PEER_HEADER]: freshAddress() },
            body,
          });
        const register = await route("/api/register");
        expect((await register(post("text/plain"))).status).toBe(415);
        expect((await register(post("application/x-www-form-urlencoded"))).status).toBe(415);
        expect((await register(post("application/json"))).status).toBe(202);
      });
    });

    describe("the API's writes by Bearer token: the token is the whole authority there, never the cookie", () => {
      const BEARER_WRITES = ["/api/v1/reports", "/api/v1/download-tokens"] as const;
      let cookie: string;
      let token: string;
      let userId: string;
      let reportId: string;
      beforeAll(async () => {
        cookie = await signedInBrowser("csrf-out@example.com", PASSWORD);
        userId = (await current().gate.prisma.user.findUniqueOrThrow({ where: { email: "csrf-out@example.com" } })).id;
        token = await apiTokenFor(current().gate, userId);
        reportId = (await current().gate.prisma.report.create({ data: { userId, content: {} } })).id;
      });

      const write = async (path: (typeof BEARER_WRITES)[number], headers: Record<string, string>) => {
        const route = (await import(`@/app${path}/route`)) as { POST: Handler };
        return route.POST(
          new NextRequest(`http://localhost${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), ...headers },
            body: JSON.stringify({ report_id: reportId }),
          }),
        );
      };
      /** What the account's writes left: its reports and download tokens. */
      const reportsOf = async () =>
        (await current().gate.prisma.report.count({ where: { userId } })) +
        (await current().gate.prisma.downloadToken.count({ where: { userId } }));

      it.each(BEARER_WRITES)(
        "takes %s with a Bearer token from a client that keeps an unrelated cookie and names no origin",
        async (path) => {
          const res = await write(path, { authorization: `Bearer ${token}`, cookie: "theme=dark; gatehouse-device=x" });
          expect(res.status).toBe(201);
        },
      );

      it.each(BEARER_WRITES)("still refuses another site's %s that carries the browser's session and no Authorization", async (path) => {
        const before = await reportsOf();
        const sites: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { origin: "https://evil.example" }, {}];
        for (const headers of sites) {
          const res = await write(path, { ...headers, cookie });
          expect(res.status, JSON.stringify(headers)).toBe(403);
          expect(((await res.json()) as { error: string }).error).toBe("csrf_invalid");
        }
        expect(await reportsOf()).toBe(before);
      });

      it.each(BEARER_WRITES)("never takes a bad Bearer token on %s as the session cookie's user, from any site", async (path) => {
        const before = await reportsOf();
        const sites: Record<string, string>[] = [
          { "sec-fetch-site": "cross-site" },
          { origin: "https://evil.example" },
          {},
          { "sec-fetch-site": "same-origin" },
        ];
        for (const headers of sites) {
          for (const authorization of ["Bearer not-a-token", "Bearer ", "bearer " + token]) {
            const res = await write(path, { ...headers, cookie, authorization });
            expect([401, 403], `${authorization} ${JSON.stringify(headers)}`).toContain(res.status);
            expect(res.status).not.toBe(201);
          }
        }
        // Another scheme is no Bearer token: a browser may add Basic credentials on its own.
        const basic = await write(path, { "sec-fetch-site": "cross-site", cookie, authorization: "Basic dXNlcjpwYXNz" });
        expect(basic.status).toBe(403);
        expect(await reportsOf()).toBe(before);
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
