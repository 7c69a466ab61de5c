import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { breachedPasswordsSuite } from "./breached-passwords.suite";

const url = postgresUrl();
describe.skipIf(!url)("breached passwords on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  if (url) breachedPasswordsSuite("PostgreSQL", () => freshPostgres(url));
});
