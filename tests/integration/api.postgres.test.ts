import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { apiSuite } from "./api.suite";

const url = postgresUrl();
if (url) apiSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("the API on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
