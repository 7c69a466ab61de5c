import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { recoverySuite } from "./recovery.suite";

const url = postgresUrl();
describe.skipIf(!url)("recovery by email on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  recoverySuite("PostgreSQL", () => freshPostgres(url!));
});
