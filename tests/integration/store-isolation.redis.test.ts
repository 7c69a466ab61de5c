import { describe, it } from "vitest";
import { freshPglite } from "../helpers/databases";
import { redisUrl } from "../helpers/redis";
import { storeIsolationSuite } from "./store-isolation.suite";

const url = redisUrl();
if (url) storeIsolationSuite("redis", freshPglite, url);
else describe.skip("store isolation on Redis (set TEST_REDIS_URL)", () => it("skipped", () => {}));
