import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { apiSuite } from "./api.suite";

const url = postgresUrl();
describe.skipIf(!url)("the API on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  if (url) apiSuite("PostgreSQL", () => freshPostgres(url));
});
