import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { storeIsolationSuite } from "./store-isolation.cases";

const url = postgresUrl();
describe.skipIf(!url)("store isolation on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  storeIsolationSuite("postgres", () => freshPostgres(url!));
});
