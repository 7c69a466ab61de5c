import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { sessionsSuite } from "./sessions.suite";

const url = postgresUrl();
describe.skipIf(!url)("browser sessions on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  sessionsSuite("PostgreSQL", () => freshPostgres(url!));
});
