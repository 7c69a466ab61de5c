import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { webhooksSuite } from "./webhooks.suite";

const url = postgresUrl();
describe.skipIf(!url)("security webhooks on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  webhooksSuite("PostgreSQL", () => freshPostgres(url!));
});
