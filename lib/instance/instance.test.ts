import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config/env";
import { createInstance, ENV_FILE_NAME, FIRST_PORT, InstanceError, validateClientName } from "./instance";

function envOf(file: string): Record<string, string> {
  const entries = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]);
  return Object.fromEntries(entries);
}

describe("npm run instance -- new", () => {
  let base: string;
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-instances-"));
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it("writes an env file the production configuration accepts, with fresh secrets, its own data folder and port", () => {
    const { envFile } = createInstance({ baseDir: base, client: "acme", url: "https://acme.example.org" });
    expect(envFile).toBe(path.join(base, "acme", ENV_FILE_NAME));
    expect(fs.statSync(envFile).mode & 0o777).toBe(0o600);
    const env = envOf(envFile);
    const config = parseConfig(env, { devServer: false });
    expect(config.NODE_ENV).toBe("production");
    expect(config.NEXTAUTH_URL).toBe("https://acme.example.org");
    expect(env.DATABASE_URL).toBe(`pglite:${path.join(base, "acme", "data", "pglite")}`);
    expect(env.MAIL_OUTBOX_DIR).toBe(path.join(base, "acme", "data", "outbox"));
    expect(env.PORT).toBe(String(FIRST_PORT));
    expect(env.ALLOW_INSECURE_COOKIES).toBeUndefined();
    const secrets = [
      "NEXTAUTH_SECRET",
      "RATE_LIMIT_KEY_SECRET",
      "ALTCHA_HMAC_SECRET",
      "API_TOKEN_SECRET",
      "DEVICE_COOKIE_SECRET",
      "METRICS_TOKEN",
    ].map((name) => env[name]!);
    for (const secret of secrets) expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(new Set(secrets).size).toBe(secrets.length);
    expect(fs.readFileSync(envFile, "utf8")).toMatch(/^# SMTP_URL=smtps:\/\/.*\n# MAIL_FROM=$/m);

    const other = envOf(createInstance({ baseDir: base, client: "globex" }).envFile);
    expect(other.NEXTAUTH_SECRET).not.toBe(env.NEXTAUTH_SECRET);
    expect(other.PORT).toBe(String(FIRST_PORT + 1));
    expect(other.NEXTAUTH_URL).toBe("https://globex.example.com");
  });

  it("refuses to overwrite an existing instance and leaves its file as it was", () => {
    const { envFile } = createInstance({ baseDir: base, client: "acme" });
    const before = fs.readFileSync(envFile, "utf8");
    expect(() => createInstance({ baseDir: base, client: "acme", url: "https://other.example.org" })).toThrow(/exists/);
    expect(fs.readFileSync(envFile, "utf8")).toBe(before);
  });

  it("accepts http:// only on this machine, and then says the cookies are insecure; the URL's port is the listening port", () => {
    const env = envOf(createInstance({ baseDir: base, client: "local", url: "http://127.0.0.1:3999" }).envFile);
    expect(env.ALLOW_INSECURE_COOKIES).toBe("true");
    expect(env.PORT).toBe("3999");
    expect(() => parseConfig(env, { devServer: false })).not.toThrow();
    expect(() => createInstance({ baseDir: base, client: "plain", url: "http://acme.example.org" })).toThrow(InstanceError);
    expect(() => createInstance({ baseDir: base, client: "port", port: "70000" })).toThrow(/--port/);
  });

  it.each(["", "../etc", "acme/x", "Acme", "-acme", "acme-", ".", "a".repeat(41), "acme\n"])("refuses the client name %j", (name) => {
    expect(() => validateClientName(name)).toThrow(InstanceError);
    expect(fs.readdirSync(base)).toEqual([]);
  });
});
