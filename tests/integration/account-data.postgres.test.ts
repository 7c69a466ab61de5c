import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { accountDataSuite } from "./account-data.suite";

const url = postgresUrl();
describe.skipIf(!url)("download my data on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  accountDataSuite("PostgreSQL", () => freshPostgres(url!));
});
