import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { secondFactorSuite } from "./second-factor.suite";

const url = postgresUrl();
// The limiter and the replay store on PostgreSQL too, so the good-once rules are checked where instances share them.
describe.skipIf(!url)("the second step on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  if (url) secondFactorSuite("PostgreSQL", () => freshPostgres(url), { shared: true });
});
