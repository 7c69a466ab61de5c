import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { storeIsolationSuite } from "./store-isolation.suite";

const url = postgresUrl();
if (url) storeIsolationSuite("postgres", () => freshPostgres(url));
else describe.skip("store isolation on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
