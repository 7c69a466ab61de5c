import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { accountFormPost, browserSignIn, deviceCookieOf, sessionPairOf, tokenSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { servedForSuite } from "../helpers/served-suite";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const DATA = "/api/account/data";

/**
 * "Download my data" (issue 57, item 2) through the real route and a real database: every part of
 * the account is in the file, no secret of any kind is, and it takes a fresh authentication and
 * the per-account quota from the policies table.
 */
export function accountDataSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`download my data on ${label}`, () => {
    const served = servedForSuite(
      makeDatabase,
      ["full", "quota", "stale"].map((name) => `${name}@example.com`),
      PASSWORD,
    );
    let gate: Gate;
    beforeAll(() => {
      gate = served.gate;
    });

    afterEach(() => vi.restoreAllMocks());

    async function signedIn(email: string) {
      const res = await browserSignIn(email, PASSWORD);
      expect(res.status).toBe(200);
      return { session: sessionPairOf(res)!, device: deviceCookieOf(res)! };
    }

    it("gives every part of the account as a JSON file, and no secret of any kind", async () => {
      const email = "full@example.com";
      const { session, device } = await signedIn(email);
      const tokens = (await (await tokenSignIn(email, PASSWORD)).json()) as { access_token: string; refresh_token: string };
      const user = await gate.prisma.user.findUniqueOrThrow({ where: { email } });
      const nowMs = Date.now();
      // Factors and a passkey written as their stores would keep them, each with a recognisable secret.
      await gate.prisma.totpFactor.create({
        data: { userId: user.id, secretSealed: "sealed-totp-secret-0123456789", createdAt: new Date(nowMs), enabledAt: new Date(nowMs) },
      });
      await gate.prisma.recoveryCode.create({
        data: { userId: user.id, digest: "recovery-digest-0123456789", createdAt: new Date(nowMs) },
      });
      await gate.prisma.passkey.create({
        data: {
          userId: user.id,
          credentialId: "credential-id-0123456789",
          publicKey: "public-key-0123456789",
          transports: [],
          deviceType: "multiDevice",
          backedUp: true,
          name: "Work laptop",
          createdAt: new Date(nowMs),
        },
      });
      await gate.prisma.report.create({ data: { userId: user.id, content: { signIns: 2 } } });
      const link = await gate.emailTokens.issue(user.id, "reset_password", user.credentialGeneration, nowMs, 3_600_000);

      const res = await accountFormPost(gate, DATA, session, {});
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="account-data-\d{4}-\d{2}-\d{2}\.json"$/);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const text = await res.text();
      const data = JSON.parse(text) as Record<string, unknown>;
      expect(data).toMatchObject({
        format: "gatehouse-account-data",
        account: { email, createdAt: user.createdAt.toISOString() },
        browserSessions: [expect.objectContaining({ thisBrowser: true })],
        apiSessions: [expect.objectContaining({ client: "API client" })],
        passkeys: [{ name: "Work laptop", synced: true, backedUp: true, lastUsedAt: null, addedAt: new Date(nowMs).toISOString() }],
        factors: {
          passkeyAfterPassword: false,
          authenticatorApp: { addedAt: new Date(nowMs).toISOString() },
          recoveryCodes: [{ madeAt: new Date(nowMs).toISOString(), usedAt: null }],
        },
        reports: [expect.objectContaining({ content: { signIns: 2 } })],
      });
      expect((data.knownDevices as unknown[]).length).toBe(2);
      expect((data.securityEvents as { kind: string }[]).map((event) => event.kind)).toContain("sign_in_succeeded");

      const secrets = [
        user.passwordHash!,
        "sealed-totp-secret",
        "recovery-digest",
        "credential-id",
        "public-key",
        link,
        session.split("=")[1]!,
        device,
        tokens.access_token,
        tokens.refresh_token,
        gate.config.session.secret,
        user.id,
        ...(await gate.prisma.browserSession.findMany({ where: { userId: user.id } })).map((row) => row.id),
        ...(await gate.prisma.refreshToken.findMany({ where: { userId: user.id } })).flatMap((row) => [row.tokenHash, row.familyId]),
        ...(await gate.prisma.emailToken.findMany({ where: { userId: user.id } })).map((row) => row.digest),
        ...(await gate.devices.listOf(gate.usernameKey(email), Date.now())).map((row) => row.id),
        gate.usernameKey(email),
      ];
      for (const secret of secrets) expect(text, secret.slice(0, 12)).not.toContain(secret);
      expect(text).not.toMatch(/hash|digest|secret|token/i);
    });

    it("one export per account per 5 minutes, from the policies table; 429 with Retry-After past it", async () => {
      const first = await signedIn("quota@example.com");
      const second = await signedIn("quota@example.com");
      expect((await accountFormPost(gate, DATA, first.session, {})).status).toBe(200);
      // Another session of the same account shares the account's quota.
      const again = await accountFormPost(gate, DATA, second.session, { json: "true" });
      expect(again.status).toBe(429);
      expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(200);
      expect(await again.json()).toMatchObject({ error: "rate_limited" });
      expect(gate.config.rateLimit.policies.accountExport.description).toMatch(/Download my data/);
    });

    it("asks for a fresh authentication first, and that request spends nothing of the quota", async () => {
      const { session } = await signedIn("stale@example.com");
      const signedInAtMs = Date.now();
      vi.spyOn(gate, "clock").mockReturnValue(signedInAtMs + 11 * 60_000);
      const stale = await accountFormPost(gate, DATA, session, { json: "true" });
      expect(stale.status).toBe(401);
      expect(await stale.json()).toMatchObject({ error: "reauthentication_required" });
      const form = await accountFormPost(gate, DATA, session, {});
      expect(form.status).toBe(303);
      expect(form.headers.get("location")).toBe("/account?notice=confirm_first");
      vi.restoreAllMocks();
      // Fresh again (as after "Confirm it's you"): the export the quota allows is still there.
      expect((await accountFormPost(gate, DATA, session, {})).status).toBe(200);
    });
  });
}

onEachDatabase("download my data", ({ label, makeDatabase }) => accountDataSuite(label, makeDatabase));
