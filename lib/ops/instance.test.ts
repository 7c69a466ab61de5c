import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config/env";
import { loadBrand } from "@/lib/brand/brand";
import { runScript } from "../../tests/helpers/cli";
import { createInstance, defaultBrandName, ENV_FILE_NAME, FIRST_PORT, InstanceError, validateClientName } from "./instance";

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#b3261e"/></svg>';

function envOf(file: string): Record<string, string> {
  const entries = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    // Double quotes are taken off, as node --env-file, systemd and compose do.
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1).replace(/^"(.*)"$/, "$1")]);
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
    expect(config.nodeEnv).toBe("production");
    expect(config.http.publicUrl).toBe("https://acme.example.org");
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

  describe("the brand", () => {
    const brandVariables = ["BRAND_NAME", "BRAND_LOGO", "BRAND_COLOR", "SUPPORT_URL", "SUPPORT_EMAIL", "PRIVACY_URL", "TERMS_URL"];

    it("defaults to the client's name and lists every other brand variable as a comment", () => {
      const { envFile } = createInstance({ baseDir: base, client: "acme-staging" });
      const env = envOf(envFile);
      expect(env.BRAND_NAME).toBe("Acme staging");
      const text = fs.readFileSync(envFile, "utf8");
      for (const name of brandVariables.slice(1)) expect(text).toMatch(new RegExp(`^# ${name}=$`, "m"));
      expect(defaultBrandName("acme")).toBe("Acme");
    });

    it("writes the answers, copies the logo into the instance folder, and the server's own checks accept them", () => {
      const source = path.join(base, "acme-logo.svg");
      fs.writeFileSync(source, SVG);
      const { envFile } = createInstance({
        baseDir: base,
        client: "acme",
        url: "https://acme.example.org",
        brand: {
          name: "Acme Corp",
          logo: source,
          color: "#B3261E",
          support: "help@acme.example.org",
          privacyUrl: "https://acme.example.org/privacy",
          termsUrl: "https://acme.example.org/terms",
        },
      });
      const env = envOf(envFile);
      expect(env).toMatchObject({
        BRAND_NAME: "Acme Corp",
        BRAND_LOGO: path.join(base, "acme", "logo.svg"),
        BRAND_COLOR: "#B3261E",
        SUPPORT_EMAIL: "help@acme.example.org",
        PRIVACY_URL: "https://acme.example.org/privacy",
        TERMS_URL: "https://acme.example.org/terms",
      });
      expect(env.SUPPORT_URL).toBeUndefined();
      expect(fs.readFileSync(env.BRAND_LOGO!, "utf8")).toBe(SVG);
      expect(fs.statSync(env.BRAND_LOGO!).mode & 0o777).toBe(0o600);
      const brand = loadBrand(parseConfig(env, { devServer: false }));
      expect(brand).toMatchObject({ name: "Acme Corp", supportEmail: "help@acme.example.org" });
      expect(brand.logo?.contentType).toBe("image/svg+xml");
      expect(brand.color?.light.accent).toBe("#b3261e");
    });

    it("takes a support answer with a scheme for SUPPORT_URL", () => {
      const env = envOf(createInstance({ baseDir: base, client: "acme", brand: { support: "https://acme.example.org/help" } }).envFile);
      expect(env.SUPPORT_URL).toBe("https://acme.example.org/help");
      expect(env.SUPPORT_EMAIL).toBeUndefined();
    });

    it.each([
      [{ color: "#ffee00" }, /BRAND_COLOR: #ffee00 cannot be read/],
      [{ color: "blue" }, /BRAND_COLOR: must be a #rrggbb colour/],
      [{ privacyUrl: "http://acme.example.org/privacy" }, /PRIVACY_URL: must be an https:\/\/ URL/],
      [{ support: "ftp://acme.example.org" }, /SUPPORT_URL: must be an https:\/\/ URL/],
      [{ name: 'Acme "Pro"' }, /BRAND_NAME: no " or \\/],
      [{ logo: "/no/such/logo.svg" }, /BRAND_LOGO: \/no\/such\/logo\.svg cannot be read \(ENOENT\)/],
    ])("refuses %o before writing anything", (brand, message) => {
      expect(() => createInstance({ baseDir: base, client: "acme", brand })).toThrow(message);
      expect(fs.existsSync(path.join(base, "acme", ENV_FILE_NAME))).toBe(false);
    });

    it("refuses a scripted SVG logo, naming BRAND_LOGO", () => {
      const source = path.join(base, "evil.svg");
      fs.writeFileSync(source, SVG.replace("<rect", "<script>alert(1)</script><rect"));
      expect(() => createInstance({ baseDir: base, client: "acme", brand: { logo: source } })).toThrow(/BRAND_LOGO: .*<script>/);
    });

    it("takes the brand options on the command line without asking (no terminal)", async () => {
      const source = path.join(base, "cli-logo.svg");
      fs.writeFileSync(source, SVG);
      const args = ["new", "acme", "--dir", base, "--url", "https://acme.example.org"];
      const brand = [
        "--brand-name",
        "Acme",
        "--brand-color",
        "#1d6b3a",
        "--brand-logo",
        source,
        "--terms-url",
        "https://acme.example.org/t",
      ];
      const made = await runScript("instance", [...args, ...brand], { ...process.env });
      expect(made.code, made.out).toBe(0);
      expect(made.out).toMatch(/brand Acme, colour #1d6b3a, logo .*acme\/logo\.svg/);
      expect(envOf(path.join(base, "acme", ENV_FILE_NAME))).toMatchObject({ BRAND_NAME: "Acme", TERMS_URL: "https://acme.example.org/t" });
      // The server reads the file with node --env-file, where an unquoted # would start a comment.
      const read = spawnSync(process.execPath, [`--env-file=${path.join(base, "acme", ENV_FILE_NAME)}`, "-p", "process.env.BRAND_COLOR"], {
        encoding: "utf8",
      });
      expect(read.stdout.trim()).toBe("#1d6b3a");

      const refused = await runScript("instance", ["new", "globex", "--dir", base, "--brand-color", "#eeeeee", "--no-input"], {
        ...process.env,
      });
      expect(refused.code).toBe(1);
      expect(refused.out).toMatch(/BRAND_COLOR: #eeeeee cannot be read/);
      expect(fs.existsSync(path.join(base, "globex"))).toBe(false);
    });
  });
});
