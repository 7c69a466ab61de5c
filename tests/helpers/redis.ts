import { randomBytes } from "node:crypto";

/**
 * The Redis of this machine when TEST_REDIS_URL is set. Without it the suite is skipped
 * locally, but fails under CI=true: a missing service must not pass as green.
 */
export function redisUrl(): string | undefined {
  const url = process.env.TEST_REDIS_URL;
  if (!url && process.env.CI === "true") throw new Error("TEST_REDIS_URL must be set when CI=true");
  return url;
}

/** A key prefix of its own per test run, so runs never share (or delete) each other's keys. */
export function testKeyPrefix(): string {
  return `gatehouse-test:${randomBytes(4).toString("hex")}:`;
}
