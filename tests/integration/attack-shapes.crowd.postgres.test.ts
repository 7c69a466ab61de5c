import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { redisUrl, testKeyPrefix } from "../helpers/redis";
import { crowdShapes } from "./attack-shapes.crowd.suite";

const url = postgresUrl();
const redis = redisUrl();
describe.skipIf(!url || !redis)("the owner and the crowd on PostgreSQL and Redis (needs TEST_DATABASE_URL, TEST_REDIS_URL)", () => {
  // Registered either way: without the services its tests are listed as skipped.
  crowdShapes(
    "PostgreSQL, Redis limiter",
    () => freshPostgres(url!),
    () => ({
      RATE_LIMIT_STORE: "redis",
      REDIS_URL: redis!,
      RATE_LIMIT_KEY_PREFIX: testKeyPrefix(),
    }),
  );
});
