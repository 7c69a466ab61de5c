import type { Gatehouse } from "@/lib/gatehouse";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { browserSignIn, createAccount } from "../helpers/browser";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { solve } from "../helpers/altcha";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, PEER_HEADER } from "../helpers/peer";

type Entry = Record<string, unknown>;

/** The security log through the real routes: one line per refusal and per outcome, no address or email in clear. */
describe("security log", () => {
  let database: TestDatabase;
  let gate: Gatehouse;
  let lines: () => Entry[];
  const EMAIL = "followed@example.com";
  const PASSWORD = "the right passphrase";
  const ATTACKER = "203.0.113.99";

  beforeAll(async () => {
    announcePeerHeader();
    database = await freshPglite();
    // Plain refusals after a failure (a device confirmation's lines are its own suite's).
    gate = await servedGatehouse(database.url, { ALTCHA_MAX_COUNTER: "1000", NEW_DEVICE_CONFIRMATION: "off" });
    const info = vi.spyOn(gate.log, "info");
    lines = () => info.mock.calls.map(([entry]) => entry as unknown as Entry).filter((entry) => entry?.event === "security");
    await createAccount(gate, EMAIL, PASSWORD);
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  /** A proof of work sized for `address` (its failures raise the level it must solve). */
  async function payloadFor(address: string): Promise<string> {
    const { GET } = await import("@/app/api/altcha/challenge/route");
    return solve(await (await GET(new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: address } }))).json());
  }
  const attempt = async (password: string, address: string) =>
    browserSignIn(EMAIL, password, { address, fields: { altcha: await payloadFor(address) } });

  it("logs each refusal and each outcome once, keyed by HMACs that follow one client", async () => {
    const route = "/api/auth/callback/credentials";
    const before = lines().length;

    expect((await attempt("wrong guess", ATTACKER)).status).toBe(401);
    expect((await attempt(PASSWORD, "198.18.1.1")).status).toBe(200);
    expect((await browserSignIn(EMAIL, "wrong guess", { address: ATTACKER, fields: { altcha: "not a payload" } })).status).toBe(400);
    // The success reset the count: three more from the attacker and two from elsewhere reach the
    // threshold (5), so the next attempt is locked; the attacker's sixth attempt in 15 minutes
    // meets the per-username limit (5 per address) first.
    // Each a new guess: a repeat of one is not counted again (record 19).
    for (let i = 0; i < 3; i++) expect((await attempt(`wrong guess ${i}`, ATTACKER)).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await attempt(`wrong guess ${i}`, `198.18.2.${i + 1}`)).status).toBe(401);
    const locked = await attempt("wrong guess", "198.18.1.2");
    expect(locked.status).toBe(429);
    const limited = await attempt("wrong guess", ATTACKER);
    expect(limited.status).toBe(429);

    const logged = lines().slice(before);
    expect(logged.map((entry) => entry.outcome)).toEqual([
      "sign_in_failed",
      "sign_in_succeeded",
      "captcha_invalid",
      "sign_in_failed",
      "sign_in_failed",
      "sign_in_failed",
      "sign_in_failed",
      "sign_in_failed",
      "locked",
      "rate_limited",
    ]);
    for (const entry of logged) {
      expect(entry.route).toBe(route);
      expect(entry.usernameKey).toBe(gate.usernameKey(EMAIL));
      expect(entry.addressKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    expect(logged[9]).toMatchObject({ policy: "signInUsername" });
    expect(logged[2]).toMatchObject({ detail: "malformed" });
    // One attacker, one key, on every line it caused; another address, another key.
    const attackerLines = [0, 2, 3, 4, 5, 9].map((i) => logged[i]!.addressKey);
    expect(new Set(attackerLines).size).toBe(1);
    expect(logged[1]!.addressKey).not.toBe(attackerLines[0]);
    // Nothing in clear.
    const text = JSON.stringify(logged);
    for (const secret of [EMAIL, ATTACKER, "198.18.1.1", "198.18.1.2", "198.18.2.1", PASSWORD, "wrong guess"])
      expect(text).not.toContain(secret);
  });
});
