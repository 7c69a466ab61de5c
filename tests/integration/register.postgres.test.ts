import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { registrationSuite } from "./register.suite";

const url = postgresUrl();
describe.skipIf(!url)("registration on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  if (url) registrationSuite("PostgreSQL", () => freshPostgres(url));
});
