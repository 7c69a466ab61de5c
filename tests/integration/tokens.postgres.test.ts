import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { tokenSuite } from "./tokens.suite";

const url = postgresUrl();
describe.skipIf(!url)("token API on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  tokenSuite("PostgreSQL", () => freshPostgres(url!));
});
