import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";
import { apiTokenFor } from "../helpers/tokens";
import { passwordCheck } from "../helpers/password-check";
import { registerAccount } from "@/lib/users/accounts";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { onEachDatabase } from "../helpers/each-database";

/** The authenticated API, its buckets, telemetry isolation and security events, through the real route handlers. */
export function apiSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`the API on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;
    let tokenFor: (userId: string, nowMs?: number) => Promise<string>;
    let alice: { id: string; token: string };
    let bob: { id: string; token: string };

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url);
      tokenFor = async (userId, nowMs = Date.now()) => apiTokenFor(gate, userId, { nowMs });
      const make = async (email: string) => {
        const result = await registerAccount(gate.prisma, { email, password: "a long enough passphrase" }, gate.hasher, Date.now());
        if (!result.ok) throw new Error("registration failed");
        return { id: result.user.id, token: await tokenFor(result.user.id) };
      };
      alice = await make("alice@example.com");
      bob = await make("bob@example.com");
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    function request(
      path: string,
      init: { method?: string; token?: string; address?: string; body?: string; headers?: Record<string, string> } = {},
    ) {
      const headers: Record<string, string> = { [PEER_HEADER]: init.address ?? freshAddress(), ...init.headers };
      if (init.token) headers.authorization = `Bearer ${init.token}`;
      if (init.body) headers["content-type"] = "application/json";
      return new NextRequest(`http://localhost${path}`, { method: init.method ?? "GET", headers, body: init.body });
    }

    const reports = () => import("@/app/api/v1/reports/route");
    const report = () => import("@/app/api/v1/reports/[id]/route");
    const params = (id: string) => ({ params: Promise.resolve({ id }) });

    it("builds reports in a tight per-user bucket: the 7th in 10 s is 429 with RateLimit headers", async () => {
      const { POST } = await reports();
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await POST(request("/api/v1/reports", { method: "POST", token: alice.token }))).status);
      expect(statuses).toEqual([201, 201, 201, 201, 201, 201]);
      const refused = await POST(request("/api/v1/reports", { method: "POST", token: alice.token }));
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get("RateLimit-Policy")).toBe('"apiReports";q=6;w=10');
      expect(refused.headers.get("RateLimit")).toMatch(/^"apiReports";r=0;t=\d+$/);
      // Keyed by user: Bob is not affected.
      expect((await POST(request("/api/v1/reports", { method: "POST", token: bob.token }))).status).toBe(201);
    });

    it("downloads only the caller's reports, in a bucket of their own", async () => {
      const { POST } = await reports();
      const { GET } = await report();
      const bobs = (await (await POST(request("/api/v1/reports", { method: "POST", token: bob.token }))).json()) as { id: string };
      // Alice's build bucket is empty (previous test), yet her downloads still work.
      const own = await GET(request(`/api/v1/reports/${bobs.id}`, { token: bob.token }), params(bobs.id));
      expect(own.status).toBe(200);
      expect((await own.json()).content).toMatchObject({ signIns: 0 });
      const foreign = await GET(request(`/api/v1/reports/${bobs.id}`, { token: alice.token }), params(bobs.id));
      const unknown = await GET(
        request("/api/v1/reports/3f1c2a9e-0000-4000-8000-000000000000", { token: alice.token }),
        params("3f1c2a9e-0000-4000-8000-000000000000"),
      );
      const malformed = await GET(request("/api/v1/reports/not-an-id", { token: alice.token }), params("not-an-id"));
      for (const response of [foreign, unknown, malformed]) {
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({ error: "not_found", message: "No such report." });
      }
    });

    it("limits downloads per address (30 per minute)", async () => {
      const { GET } = await report();
      const address = freshAddress();
      const id = "3f1c2a9e-0000-4000-8000-000000000001";
      const statuses = [];
      for (let i = 0; i < 31; i++)
        statuses.push((await GET(request(`/api/v1/reports/${id}`, { token: bob.token, address }), params(id))).status);
      expect(statuses.slice(0, 30).every((status) => status === 404)).toBe(true);
      expect(statuses[30]).toBe(429);
    });

    it("refuses missing, malformed, forged and expired tokens with a JSON 401", async () => {
      const { POST } = await reports();
      const { SignJWT } = await import("jose");
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(alice.id)
        .setIssuer("gatehouse")
        .setAudience("gatehouse-api")
        .setExpirationTime("5m")
        .sign(new TextEncoder().encode("x".repeat(32)));
      const expired = await tokenFor(alice.id, Date.now() - 3_600_000);
      const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify({ sub: alice.id, iss: "gatehouse", aud: "gatehouse-api" })).toString("base64url")}.`;
      const cases = [
        request("/api/v1/reports", { method: "POST" }),
        request("/api/v1/reports", { method: "POST", headers: { authorization: "Bearer not a token" } }),
        request("/api/v1/reports", { method: "POST", token: forged }),
        request("/api/v1/reports", { method: "POST", token: expired }),
        request("/api/v1/reports", { method: "POST", token: unsigned }),
      ];
      for (const [i, req] of cases.entries()) {
        const response = await POST(req);
        expect(response.status, `case ${i}`).toBe(401);
        expect((await response.json()).error, `case ${i}`).toMatch(/^(invalid_token|unauthenticated)$/);
      }
    });

    it("issues download tokens 5 per hour per user; a token opens its report's download link once", async () => {
      const { POST: build } = await reports();
      const { id } = (await (await build(request("/api/v1/reports", { method: "POST", token: bob.token }))).json()) as { id: string };
      const { POST } = await import("@/app/api/v1/download-tokens/route");
      const issued = [];
      for (let i = 0; i < 6; i++)
        issued.push(
          await POST(
            request("/api/v1/download-tokens", {
              method: "POST",
              token: bob.token,
              address: freshAddress(),
              body: JSON.stringify({ report_id: id }),
            }),
          ),
        );
      expect(issued.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 429]);
      const { token } = (await issued[0]!.json()) as { token: string };
      const { GET } = await report();
      expect((await GET(request(`/api/v1/reports/${id}?token=${token}`), params(id))).status).toBe(200);
      expect((await GET(request(`/api/v1/reports/${id}?token=${token}`), params(id))).status).toBe(404);
      expect((await GET(request(`/api/v1/reports/${id}?token=forged`), params(id))).status).toBe(404);
    });

    it("a flood of CSP reports does not spend the same client's registration or API quota", async () => {
      const { POST: csp } = await import("@/app/api/csp-report/route");
      const address = freshAddress();
      const body = JSON.stringify({ "csp-report": { "violated-directive": "script-src", "blocked-uri": "inline" } });
      const statuses = [];
      for (let i = 0; i < 100; i++) {
        statuses.push(
          (
            await csp(
              new Request("http://localhost/api/csp-report", {
                method: "POST",
                headers: { [PEER_HEADER]: address, "content-type": "application/csp-report" },
                body,
              }),
            )
          ).status,
        );
      }
      expect(statuses.every((status) => status === 204)).toBe(true);
      const { POST: register } = await import("@/app/api/register/route");
      const registration = await register(
        new Request("http://localhost/api/register", {
          method: "POST",
          headers: { [PEER_HEADER]: address, "content-type": "application/json" },
          body: "{}",
        }),
      );
      expect(registration.status).toBe(400); // validated, not rate limited
      const { GET } = await report();
      const download = await GET(request("/api/v1/reports/x", { token: bob.token, address }), params("x"));
      expect(download.status).toBe(404); // reached the handler, not 429
    });

    it("records failed sign-ins, lockouts and successes for the account, with truncated addresses", async () => {
      const client = (address: string) => ({ address, key: address, source: "socket" as const });
      // The password check, through the corridor the sign-in routes run after their route limits.
      const authenticate = async (g: typeof gate, input: { email: string; password: string }, from: ReturnType<typeof client>) => {
        const outcome = await passwordCheck(g, { ...input, client: from });
        return outcome.ok === true ? outcome.user : null;
      };
      for (let i = 0; i < 5; i++)
        await authenticate(gate, { email: "alice@example.com", password: "wrong" }, client(`203.0.113.${i + 10}`));
      // The lock and the mark "under attack" both gone (a reset keeps the mark), so that this new
      // device signs in without a mailed code: what is recorded is the subject here.
      await gate.prisma.signInLockout.deleteMany({ where: { usernameKey: gate.usernameKey("alice@example.com") } });
      expect(
        await authenticate(gate, { email: "alice@example.com", password: "a long enough passphrase" }, client("2001:db8:aa:bb::1")),
      ).toMatchObject({ id: alice.id });
      const events = await gate.events.recent(alice.id);
      expect(events.map((event) => event.kind)).toEqual([
        "sign_in_succeeded",
        "locked",
        "sign_in_failed",
        "sign_in_failed",
        "sign_in_failed",
        "sign_in_failed",
        "sign_in_failed",
      ]);
      expect(events[0]!.address).toBe("2001:db8:aa::/48");
      expect(events[2]!.address).toBe("203.0.113.x");
      expect(await gate.events.failuresBeforeLatestSignIn(alice.id)).toBe(5);
      // A failure for an unknown account is recorded for nobody.
      await authenticate(gate, { email: "ghost@example.com", password: "wrong" }, client("198.51.100.1"));
      expect(await gate.prisma.securityEvent.count({ where: { address: "198.51.100.x" } })).toBe(0);
    });
  });
}

onEachDatabase("the API", ({ label, makeDatabase }) => apiSuite(label, makeDatabase));
