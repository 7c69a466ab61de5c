import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { storeWritesSuite } from "./store-writes.suite";

const url = postgresUrl();
describe.skipIf(!url)("store writes on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  storeWritesSuite("PostgreSQL", () => freshPostgres(url!));
});
