import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { knownDevicesSuite } from "./known-devices.suite";

const url = postgresUrl();
describe.skipIf(!url)("known devices on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  knownDevicesSuite("PostgreSQL", () => freshPostgres(url!));
});
