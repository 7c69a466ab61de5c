import { describe } from "vitest";
import { freshPglite } from "../helpers/databases";
import { redisUrl } from "../helpers/redis";
import { storeIsolationSuite } from "./store-isolation.cases";

const url = redisUrl();
describe.skipIf(!url)("store isolation on Redis (needs TEST_REDIS_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  storeIsolationSuite("redis", freshPglite, url);
});
