import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { tokenSuite } from "./tokens.suite";

const url = postgresUrl();
if (url) tokenSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("token API on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
