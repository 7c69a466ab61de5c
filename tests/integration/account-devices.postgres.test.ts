import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { accountDevicesSuite } from "./account-devices.suite";

const url = postgresUrl();
describe.skipIf(!url)("known devices on the account page on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  accountDevicesSuite("PostgreSQL", () => freshPostgres(url!));
});
