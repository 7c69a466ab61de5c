import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { lockoutSuite } from "./lockout.suite";

const url = postgresUrl();
if (url) lockoutSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("account lockout on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
