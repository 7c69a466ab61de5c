import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { attackShapeSuite } from "./attack-shapes.suite";

const url = postgresUrl();
describe.skipIf(!url)("attack shapes on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  attackShapeSuite("PostgreSQL", () => freshPostgres(url!));
});
