import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { apiSuite } from "./api.suite";

const url = postgresUrl();
describe.skipIf(!url)("the API on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  apiSuite("PostgreSQL", () => freshPostgres(url!));
});
