import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { solve } from "../tests/helpers/altcha";
import { freshPostgres, postgresUrl, type TestDatabase } from "../tests/helpers/databases";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";

// Sign-ins and refreshes in flight when SIGTERM arrives (as many of each).
const IN_FLIGHT = 20;

let sequence = 0;
/** A fresh client address per request (the test runner is a trusted proxy), so no limit is shared. */
function nextAddress(): string {
  sequence += 1;
  return `10.251.${Math.floor(sequence / 250) % 250}.${(sequence % 250) + 1}`;
}

type Answer = { status: number; body: Record<string, unknown>; atMs: number } | { error: string; atMs: number };

async function postJson(baseURL: string, route: string, body: unknown, address = nextAddress()): Promise<Answer> {
  try {
    const response = await fetch(`${baseURL}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, atMs: Date.now() };
  } catch (error) {
    return { error: String((error as { cause?: unknown }).cause ?? error), atMs: Date.now() };
  }
}

async function solvedChallenge(baseURL: string, address: string): Promise<string> {
  const response = await fetch(`${baseURL}/api/altcha/challenge`, { headers: { "x-forwarded-for": address } });
  return solve(await response.json());
}

async function tokenSignIn(baseURL: string, email: string): Promise<Answer> {
  const address = nextAddress();
  return postJson(
    baseURL,
    "/api/v1/authentication/token",
    { email, password: PASSWORD, altcha: await solvedChallenge(baseURL, address) },
    address,
  );
}

function refreshTokenOf(answer: Answer): string {
  if (!("status" in answer) || answer.status !== 200 || typeof answer.body.refresh_token !== "string") {
    throw new Error(`expected tokens, got ${JSON.stringify(answer)}`);
  }
  return answer.body.refresh_token;
}

const TARGETS = ["pglite", "postgres"] as const;

for (const target of TARGETS) {
  test.describe(`SIGTERM on ${target}`, () => {
    test.describe.configure({ mode: "serial" });
    let env: Record<string, string>;
    let dispose: () => Promise<void> = async () => {};
    const started: Instance[] = [];

    test.beforeAll(async () => {
      let databaseUrl: string;
      if (target === "postgres") {
        const url = postgresUrl();
        test.skip(!url, "needs TEST_DATABASE_URL (CI sets it)");
        const database: TestDatabase = await freshPostgres(url!);
        databaseUrl = database.url;
        dispose = () => database.dispose();
      } else {
        const dataDir = mkdtempSync(path.join(os.tmpdir(), "gatehouse-shutdown-"));
        databaseUrl = `pglite:${dataDir}`;
        dispose = async () => rmSync(dataDir, { recursive: true, force: true });
      }
      // One Argon2id at a time and room for every sign-in in the queue: the sign-ins stay in
      // flight for a while, and none is refused for capacity.
      // Addresses count as verified at registration here: these tests sign in at once (the outbox still gets the mail).
      env = {
        ...sharedSecrets(),
        DATABASE_URL: databaseUrl,
        HASH_CONCURRENCY: "1",
        HASH_TRUSTED_SLOTS: "0",
        HASH_QUEUE: String(IN_FLIGHT * 2),
        REQUIRE_EMAIL_VERIFICATION: "false",
      };
    });

    test.afterAll(async () => {
      await Promise.all(started.splice(0).map((instance) => instance.stop()));
      await dispose();
    });

    async function start(): Promise<Instance> {
      const instance = await startInstance(env);
      started.push(instance);
      return instance;
    }

    test("every in-flight sign-in and refresh is answered, and every rotated refresh token survives the restart", async () => {
      // Two starts, 40 sign-ins with proofs of work and 60 refreshes on a shared 2-core machine.
      test.setTimeout(240_000);
      const first = await start();
      const email = uniqueEmail(`shutdown-${target}`);
      const address = nextAddress();
      const registered = await postJson(
        first.baseURL,
        "/api/register",
        { email, password: PASSWORD, altcha: await solvedChallenge(first.baseURL, address) },
        address,
      );
      expect("status" in registered && registered.status).toBe(202);

      const refreshTokens: string[] = [];
      for (let i = 0; i < IN_FLIGHT; i++) refreshTokens.push(refreshTokenOf(await tokenSignIn(first.baseURL, email)));
      const signIns = await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          const signInAddress = nextAddress();
          return { address: signInAddress, altcha: await solvedChallenge(first.baseURL, signInAddress) };
        }),
      );

      // One open connection per request to come, so that every request below travels on a
      // connection the server has already accepted: one still being opened when SIGTERM closes
      // the listener is a new connection, refused by design, not a request in flight.
      await Promise.all(Array.from({ length: IN_FLIGHT * 2 }, async () => (await fetch(`${first.baseURL}/api/health`)).text()));

      // Everything is sent at once; SIGTERM follows the first answered sign-in, while the other
      // sign-ins wait their turn for the one Argon2id slot.
      let signalledAtMs = Infinity;
      let firstSignIn!: () => void;
      const firstSignInAnswered = new Promise<void>((resolve) => (firstSignIn = resolve));
      const inFlight = [
        ...signIns.map(async ({ address: signInAddress, altcha }) => {
          const answer = await postJson(
            first.baseURL,
            "/api/v1/authentication/token",
            { email, password: PASSWORD, altcha },
            signInAddress,
          );
          firstSignIn();
          return answer;
        }),
        ...refreshTokens.map((token) => postJson(first.baseURL, "/api/v1/authentication/token/refresh", { refresh_token: token })),
      ];
      await firstSignInAnswered;
      signalledAtMs = Date.now();
      first.signal("SIGTERM");
      const answers = await Promise.all(inFlight);

      expect(answers.filter((answer) => !("status" in answer))).toEqual([]);
      expect(answers.map((answer) => ("status" in answer ? answer.status : 0))).toEqual(answers.map(() => 200));
      // The signal really came while work was in flight.
      expect(answers.filter((answer) => answer.atMs > signalledAtMs).length).toBeGreaterThanOrEqual(5);
      expect(await first.exited).toBe(0);
      expect(first.output()).toContain("SIGTERM: closed");

      // A new process on the same database: every token the old one handed out works.
      const second = await start();
      const issued = answers.map(refreshTokenOf);
      const again = await Promise.all(
        issued.map((token) => postJson(second.baseURL, "/api/v1/authentication/token/refresh", { refresh_token: token })),
      );
      expect(again.map((answer) => ("status" in answer ? answer.status : answer.error))).toEqual(issued.map(() => 200));
      expect(await second.stop()).toBe(0);
    });

    test("a second signal exits at once, without waiting for the requests in flight", async () => {
      test.setTimeout(120_000);
      const instance = await start();
      const email = uniqueEmail(`shutdown-twice-${target}`);
      const address = nextAddress();
      await postJson(
        instance.baseURL,
        "/api/register",
        { email, password: PASSWORD, altcha: await solvedChallenge(instance.baseURL, address) },
        address,
      );
      const payloads = await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          const signInAddress = nextAddress();
          return { address: signInAddress, altcha: await solvedChallenge(instance.baseURL, signInAddress) };
        }),
      );
      const inFlight = payloads.map(({ address: signInAddress, altcha }) =>
        postJson(instance.baseURL, "/api/v1/authentication/token", { email, password: PASSWORD, altcha }, signInAddress),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      instance.signal("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 20));
      instance.signal("SIGTERM");
      expect(await instance.exited).toBe(1);
      expect(instance.output()).toContain("SIGTERM again: exiting now");
      // Some were cut: that is what the second signal is for.
      const answers = await Promise.all(inFlight);
      expect(answers.some((answer) => !("status" in answer))).toBe(true);
    });
  });
}
