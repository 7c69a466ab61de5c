import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { registrationSuite } from "./register.suite";

const url = postgresUrl();
if (url) registrationSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("registration on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
