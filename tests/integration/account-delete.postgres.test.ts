import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { accountDeleteSuite } from "./account-delete.suite";

const url = postgresUrl();
describe.skipIf(!url)("delete account on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  accountDeleteSuite("PostgreSQL", () => freshPostgres(url!));
});
