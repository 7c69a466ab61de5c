import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { sessionsSuite } from "./sessions.suite";

const url = postgresUrl();
if (url) sessionsSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("browser sessions on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
