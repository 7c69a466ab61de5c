import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { attackShapeSuite } from "./attack-shapes.suite";

const url = postgresUrl();
if (url) attackShapeSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("attack shapes on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
