import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { roundTripsSuite } from "./round-trips.suite";

const url = postgresUrl();
describe.skipIf(!url)("round trips on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  roundTripsSuite("PostgreSQL", () => freshPostgres(url!));
});
