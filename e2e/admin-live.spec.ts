import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { runScript } from "../tests/helpers/cli";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

// `npm run admin` against the production server on its embedded database, while other people sign
// in: the command asks the running instance through its admin socket (lib/ops/admin-channel.ts),
// nothing stops, and each effect holds on the very next request.
test.describe("the admin command line on a live embedded instance", () => {
  test.describe.configure({ mode: "serial" });
  let dataDir: string;
  let secrets: Record<string, string>;
  let instance: Instance | undefined;

  test.beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-admin-live-"));
    secrets = sharedSecrets();
  });

  test.afterAll(async () => {
    await instance?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("unlock lets the owner in at once and revoke-sessions ends a session at once, beside sign-ins", async () => {
    test.setTimeout(300_000);
    const env = {
      ...secrets,
      DATABASE_URL: `pglite:${dataDir}/pglite`,
      LOCKOUT_THRESHOLD: "3",
      RATE_LIMIT_SIGN_IN_USERNAME: "100/1m",
      // The owner signs in right after strangers failed: no new-device code, the unlock alone is under test.
      NEW_DEVICE_CONFIRMATION: "off",
    };
    instance = await startInstance(env);
    const admin = (...args: string[]) =>
      runScript("admin", args, {
        ...process.env,
        ...env,
        NODE_ENV: "production",
        NEXTAUTH_URL: instance!.baseURL,
        ALLOW_INSECURE_COOKIES: "true",
        LOG_LEVEL: "warn",
      });
    let next = 1;
    const client = () =>
      playwrightRequest.newContext({ baseURL: instance!.baseURL, extraHTTPHeaders: { "X-Forwarded-For": `203.0.113.${next++}` } });

    const owner = uniqueEmail("admin-live-owner");
    const bystander = uniqueEmail("admin-live-bystander");
    const setup = await client();
    expect((await registerApi(setup, owner, PASSWORD)).status()).toBe(202);
    expect((await registerApi(setup, bystander, PASSWORD)).status()).toBe(202);

    // Strangers lock the owner's account (3 failures, each from a new address).
    for (let i = 0; i < 3; i++) expect((await signInApi(await client(), owner, "not the password")).kind).toBe("invalid");
    const refused = await signInApi(await client(), owner, PASSWORD);
    expect(refused).toMatchObject({ status: 429, body: { error: "locked" } });

    // Someone else keeps signing in the whole time the operator works.
    let working = true;
    const bystanderOutcomes: string[] = [];
    const signIns = (async () => {
      while (working) {
        const context = await client();
        bystanderOutcomes.push((await signInApi(context, bystander, PASSWORD)).kind);
        await context.dispose();
      }
    })();

    const unlocked = await admin("--as", "e2e operator", "unlock", owner);
    expect(unlocked, unlocked.out).toMatchObject({ code: 0, out: expect.stringContaining(`Unlocked ${owner}.`) });
    const ownerClient: APIRequestContext = await client();
    expect((await signInApi(ownerClient, owner, PASSWORD)).kind).toBe("signed-in");
    expect(await (await ownerClient.get("/api/auth/session")).json()).toMatchObject({ user: { email: owner } });

    const revoked = await admin("--as", "e2e operator", "revoke-sessions", owner);
    expect(revoked, revoked.out).toMatchObject({ code: 0, out: expect.stringContaining("1 browser sessions") });
    expect(await (await ownerClient.get("/api/auth/session")).json()).toEqual({});

    const audit = await admin("audit", "2");
    expect(audit.out.trim().split("\n")).toEqual([
      expect.stringMatching(/e2e operator\s+revoke-sessions\s+\S+…\s+live\s+done$/),
      expect.stringMatching(/e2e operator\s+unlock\s+\S+…\s+live\s+done$/),
    ]);

    working = false;
    await signIns;
    expect(bystanderOutcomes.length).toBeGreaterThan(0);
    expect(
      bystanderOutcomes.every((kind) => kind === "signed-in"),
      bystanderOutcomes.join(","),
    ).toBe(true);
    await Promise.all([setup.dispose(), ownerClient.dispose()]);
  });
});
