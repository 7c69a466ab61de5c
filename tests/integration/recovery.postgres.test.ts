import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { recoverySuite } from "./recovery.suite";

const url = postgresUrl();
if (url) recoverySuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("recovery by email on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
