import { request as playwrightRequest } from "@playwright/test";
import { freshPostgres, postgresUrl, type TestDatabase } from "../tests/helpers/databases";
import { redisUrl, testKeyPrefix } from "../tests/helpers/redis";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

// Two instances of one deployment: one PostgreSQL database (PGlite is one process only) and a
// shared limiter store. The in-memory store would give each instance its own 5 attempts.
for (const store of ["redis", "postgres"] as const) {
  test.describe(`two instances sharing the ${store} store`, () => {
    test.describe.configure({ mode: "serial" });
    let database: TestDatabase;
    const instances: Instance[] = [];

    test.beforeAll(async () => {
      test.setTimeout(120_000);
      const pg = postgresUrl();
      const redis = redisUrl();
      test.skip(!pg || !redis, "needs TEST_DATABASE_URL and TEST_REDIS_URL (CI sets both)");
      database = await freshPostgres(pg!);
      const env = {
        ...sharedSecrets(),
        DATABASE_URL: database.url,
        RATE_LIMIT_STORE: store,
        REDIS_URL: redis!,
        RATE_LIMIT_KEY_PREFIX: testKeyPrefix(),
      };
      // One after the other, each kept as soon as it is up, so afterAll stops it even if the next fails.
      for (let i = 0; i < 2; i++) instances.push(await startInstance(env));
    });

    test.afterAll(async () => {
      await Promise.all(instances.splice(0).map((instance) => instance.stop()));
      await database?.dispose();
    });

    test("3 failures through one and 2 through the other spend the 5 attempts; both refuse the 6th", async ({ clientAddress }) => {
      const [a, b] = await Promise.all(
        instances.map((instance) =>
          playwrightRequest.newContext({ baseURL: instance.baseURL, extraHTTPHeaders: { "X-Forwarded-For": clientAddress } }),
        ),
      );
      const email = uniqueEmail(`shared-${store}`);
      expect((await registerApi(a!, email, PASSWORD)).status()).toBe(202);

      const outcomes = [];
      for (const client of [a, a, a, b, b]) outcomes.push(await signInApi(client!, email, "wrong password"));
      // Each answer in full when one differs: a refusal once failed this test (CI, 2026-12-07) and
      // the kinds alone could not say whether it was the limiter's 429 or the door's 503.
      expect(
        outcomes.map((outcome) => outcome.kind),
        JSON.stringify(outcomes),
      ).toEqual(["invalid", "invalid", "invalid", "invalid", "invalid"]);

      for (const client of [a, b]) {
        const sixth = await signInApi(client!, email, PASSWORD);
        expect(sixth.status).toBe(429);
        expect(sixth.body).toMatchObject({ error: "rate_limited" });
      }
      const health = await (await b!.get("/api/health")).json();
      expect(health.rateLimitStore).toMatchObject({ kind: store, state: "up" });
      await Promise.all([a!.dispose(), b!.dispose()]);
    });

    test("an ALTCHA solution spent on one instance is refused on the other", async ({ clientAddress }) => {
      const [a, b] = await Promise.all(
        instances.map((instance) =>
          playwrightRequest.newContext({ baseURL: instance.baseURL, extraHTTPHeaders: { "X-Forwarded-For": clientAddress } }),
        ),
      );
      const { altchaPayload } = await import("./helpers/serverGrid");
      const payload = await altchaPayload(a!);
      expect((await signInApi(a!, uniqueEmail("nobody"), "wrong password", payload)).kind).toBe("invalid");
      const replay = await signInApi(b!, uniqueEmail("nobody"), "wrong password", payload);
      expect(replay.status).toBe(400);
      expect(replay.body).toMatchObject({ error: "captcha_invalid", reason: "replayed" });
      await Promise.all([a!.dispose(), b!.dispose()]);
    });
  });
}
