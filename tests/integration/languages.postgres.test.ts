import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { languageSuite } from "./languages.suite";

const url = postgresUrl();
describe.skipIf(!url)("languages on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  languageSuite("PostgreSQL", () => freshPostgres(url!));
});
