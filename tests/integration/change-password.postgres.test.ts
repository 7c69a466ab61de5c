import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { changePasswordSuite } from "./change-password.suite";

const url = postgresUrl();
describe.skipIf(!url)("change password on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  changePasswordSuite("PostgreSQL", () => freshPostgres(url!));
});
