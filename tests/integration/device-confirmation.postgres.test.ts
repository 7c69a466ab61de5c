import { describe } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { deviceConfirmationSuite } from "./device-confirmation.suite";

const url = postgresUrl();
describe.skipIf(!url)("device confirmation on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  if (url) deviceConfirmationSuite("PostgreSQL", () => freshPostgres(url));
});
