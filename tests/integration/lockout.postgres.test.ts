import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { lockoutSuite } from "./lockout.suite";

const url = postgresUrl();
describe.skipIf(!url)("account lockout on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  lockoutSuite("PostgreSQL", () => freshPostgres(url!));
});
