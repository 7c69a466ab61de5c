import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { tokenSuite } from "./tokens.suite";

const url = postgresUrl();
describe.skipIf(!url)("token API on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  if (url) tokenSuite("PostgreSQL", () => freshPostgres(url));
});
