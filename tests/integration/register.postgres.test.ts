import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { registrationSuite } from "./register.suite";

const url = postgresUrl();
describe.skipIf(!url)("registration on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  registrationSuite("PostgreSQL", () => freshPostgres(url!));
});
