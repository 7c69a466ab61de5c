import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { passkeysSuite } from "./passkeys.suite";

const url = postgresUrl();
// The limiter and the challenges' replay store on PostgreSQL too, so two instances share them.
describe.skipIf(!url)("passkeys on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  passkeysSuite("PostgreSQL", () => freshPostgres(url!), { shared: true });
});
