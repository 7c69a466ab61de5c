import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { changePasswordSuite } from "./change-password.suite";

const url = postgresUrl();
if (url) changePasswordSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("change password on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
