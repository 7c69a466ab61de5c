import { describe, it } from "vitest";
import { freshPostgres, postgresUrl } from "../helpers/databases";
import { knownDevicesSuite } from "./known-devices.suite";

const url = postgresUrl();
if (url) knownDevicesSuite("PostgreSQL", () => freshPostgres(url));
else describe.skip("known devices on PostgreSQL (set TEST_DATABASE_URL)", () => it("skipped", () => {}));
