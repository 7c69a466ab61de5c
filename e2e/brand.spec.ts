import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect as baseExpect, test, type Page } from "@playwright/test";
import { brandPalette } from "../lib/brand/contrast";
import { freePort } from "../tests/helpers/ports";
import { confirmFromOutbox, PASSWORD, submitRegistration, uniqueEmail } from "./helpers/accounts";
import { healthy, startWithEnvFile, type EnvFileServer } from "./helpers/env-file-server";
import { mailTo } from "./helpers/outbox";

// Issue 27: an instance made with `npm run instance -- new acme` and the brand options shows
// Acme's name, logo and colour on every page and in its mail; a colour people cannot read, or a
// logo that cannot be served safely, stops the start with a message naming the variable.
const root = path.resolve(__dirname, "..");
const COLOR = "#b3261e";
// A wordmark, 240 by 48 (issue 60): it keeps its 5:1 shape in the header and the mails.
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 48"><rect x="2" y="2" width="236" height="44" rx="8" fill="${COLOR}"/></svg>`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-brand-e2e-"));

type Server = EnvFileServer;

/** This checkout's build (next build), started as an instance is, with `env` over its file. */
const startServer = (envFile: string, env: Record<string, string>): Server => startWithEnvFile(root, envFile, env);

/** `npm run instance -- new <client> …` with no terminal (so nothing is asked); the env file's path. */
function newInstance(client: string, port: number, brand: string[]): string {
  const result = spawnSync(
    process.execPath,
    [
      path.join(root, "node_modules/tsx/dist/cli.mjs"),
      "scripts/instance.ts",
      "new",
      client,
      "--dir",
      work,
      "--url",
      `http://localhost:${port}`,
      "--no-input",
      ...brand,
    ],
    { cwd: root, encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`npm run instance exited ${result.status}: ${result.stdout}${result.stderr}`);
  return path.join(work, client, "gatehouse.env");
}

// Registering and confirming run a proof of work and Argon2id: seconds on a busy shared machine.
const expect = baseExpect.configure({ timeout: 30_000 });

const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(", ")})`;

// Each test starts a production server of its own (and the first one makes an instance first).
test.describe.configure({ mode: "serial", timeout: 300_000 });

test.describe("an instance branded Acme", () => {
  let server: Server;
  let baseURL = "";
  /** The listener's own address, for fetches from here (Node may resolve localhost to ::1 first). */
  let direct = "";

  test.beforeAll(async () => {
    test.setTimeout(300_000);
    const port = await freePort();
    baseURL = `http://localhost:${port}`;
    direct = `http://127.0.0.1:${port}`;
    const logo = path.join(work, "acme-logo.svg");
    fs.writeFileSync(logo, SVG);
    const envFile = newInstance("acme", port, [
      "--brand-name",
      "Acme",
      "--brand-logo",
      logo,
      "--brand-color",
      COLOR,
      "--support",
      "help@acme.example.com",
      "--privacy-url",
      "https://acme.example.com/privacy",
      "--terms-url",
      "https://acme.example.com/terms",
    ]);
    // The suite's outbox (the helpers read it) and small proofs of work; the rest is the instance's file.
    server = startServer(envFile, { ALTCHA_MAX_COUNTER: "2000", LOG_LEVEL: "warn", MAIL_OUTBOX_DIR: process.env.E2E_OUTBOX_DIR! });
    await healthy(direct, server);
  });

  test.afterAll(async () => {
    if (server?.child.exitCode === null) server.child.kill("SIGTERM");
    await server?.exited;
  });

  /** Name, logo, colours and footer on the page now showing, in the theme the page is emulating. */
  async function expectBranded(page: Page, title: RegExp, theme: "light" | "dark") {
    const colors = brandPalette(COLOR).palette[theme];
    await expect(page).toHaveTitle(title);
    await expect(page.locator("header.site .brand")).toHaveText("Acme");
    const logo = page.getByTestId("brand-logo");
    await expect(logo).toHaveAttribute("src", /^\/api\/brand\/logo\/[A-Za-z0-9_-]{16}$/);
    // Loaded and decoded: the page's CSP let it in, and the bytes are an image.
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    const button = page.locator("main button.primary").first();
    await expect(button).toHaveCSS("background-color", rgb(colors.accent));
    await expect(button).toHaveCSS("color", rgb(colors.accentText));
    await page.getByLabel("Email").first().focus();
    await expect(page.getByLabel("Email").first()).toHaveCSS("outline-color", rgb(colors.focus));
    const footer = page.locator("footer.site");
    await expect(footer.getByRole("link", { name: "Support" })).toHaveAttribute("href", "mailto:help@acme.example.com");
    await expect(footer.getByRole("link", { name: "Privacy" })).toHaveAttribute("href", "https://acme.example.com/privacy");
    await expect(footer.getByRole("link", { name: "Terms" })).toHaveAttribute("href", "https://acme.example.com/terms");
    await expect(page.locator("body")).not.toContainText("Gatehouse");
    // axe's own contrast check agrees with lib/brand/contrast.ts, on the real page in this theme.
    const { violations } = await new AxeBuilder({ page }).analyze();
    expect(violations.map((v) => `${v.id}: ${v.nodes.map((node) => node.target.join(" ")).join(", ")}`)).toEqual([]);
  }

  test("shows Acme's name, logo, colour and links on the sign-in, register and account pages, and in its mail", async ({ browser }) => {
    const context = await browser.newContext({ baseURL });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on("console", (message) => {
      if (/Content[- ]Security[- ]Policy/i.test(message.text())) refused.push(message.text());
    });

    await page.goto("/sign-in");
    await expectBranded(page, /^Sign in · Acme$/, "light");
    await page.emulateMedia({ colorScheme: "dark" });
    await expectBranded(page, /^Sign in · Acme$/, "dark");
    await page.emulateMedia({ colorScheme: "light" });

    const email = uniqueEmail("acme");
    await submitRegistration(page, email);
    await expect(page.getByTestId("register-sent")).toBeVisible();
    await page.goto("/register");
    await expectBranded(page, /^Create an account · Acme$/, "light");

    const mail = await mailTo(email, /confirm your email/i);
    expect(mail.subject).toBe("Confirm your email address for Acme");
    expect(`${mail.text}`).toContain("— Acme");
    expect(`${mail.subject} ${mail.text} ${mail.html}`).not.toContain("Gatehouse");
    // The outbox's default From speaks for the brand; the support address reads as an address.
    expect(mail.from?.value[0]).toEqual({ name: "Acme", address: "no-reply@outbox.invalid" });
    expect(mail.text).toContain("Questions? help@acme.example.com");
    expect(mail.text).not.toContain("mailto:");
    expect(mail.html).toContain('<a href="mailto:help@acme.example.com"');
    // The wordmark keeps its shape in mail: 32 px high would be 160 px wide, the widest mail allows.
    expect(mail.html).toMatch(/<img src="[^"]+\/api\/brand\/logo\/[A-Za-z0-9_-]{16}" alt="" width="160" height="32"/);

    await confirmFromOutbox(page, email, PASSWORD);
    await expect(page).toHaveTitle(/^Your account · Acme$/);
    await expect(page.locator("header.site .brand")).toHaveText("Acme");
    await expect(page.getByRole("button", { name: "Change password" })).toHaveCSS("background-color", rgb(COLOR));
    await expect(page.getByTestId("brand-logo")).toBeVisible();
    await expect(page.locator("footer.site").getByRole("link", { name: "Terms" })).toBeVisible();
    await page.goto("/");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Welcome to Acme");
    expect(refused).toEqual([]);
    await context.close();
  });

  test("draws a 240×48 wordmark 28 px high and 140 px wide, not squeezed into a square, at both sizes", async ({ browser }) => {
    const context = await browser.newContext({ baseURL });
    const page = await context.newPage();
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 1280, height: 800 },
    ]) {
      await page.setViewportSize(viewport);
      await page.goto("/sign-in");
      const logo = page.getByTestId("brand-logo");
      await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      const box = (await logo.boundingBox())!;
      expect(box.height).toBeCloseTo(28, 0);
      expect(box.width).toBeCloseTo(140, 0);
      // The name beside it still fits on the header's line, the logo not over it.
      const name = (await page.locator("header.site .brand").boundingBox())!;
      expect(name.width).toBeGreaterThan(box.width);
      expect(name.x + name.width).toBeLessThanOrEqual(viewport.width);
    }
    await context.close();
  });

  test("serves the SVG logo as image/svg+xml, cached for a year, under a CSP that runs no script", async () => {
    const html = await (await fetch(`${direct}/sign-in`)).text();
    const src = /src="(\/api\/brand\/logo\/[A-Za-z0-9_-]{16})"/.exec(html)?.[1];
    expect(src).toBeDefined();
    const response = await fetch(`${direct}${src}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(SVG);
    expect(response.headers.get("content-type")).toBe("image/svg+xml");
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    // The route's own policy, not the API's default (next.config.ts would put that one over it).
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox",
    );
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    // Every other API response keeps the API's own.
    const health = await fetch(`${direct}/api/health`);
    expect(health.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    const unknown = await fetch(`${direct}/api/brand/logo/AAAAAAAAAAAAAAAA`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});

test.describe("a start refused for its brand", () => {
  const big = path.join(work, "big.svg");
  const cases: [string, Record<string, string>, RegExp][] = [
    ["a colour too light to read", { BRAND_COLOR: "#ffee00" }, /BRAND_COLOR: #ffee00 cannot be read: light theme, links on --bg/],
    ["a colour that is no colour", { BRAND_COLOR: "crimson" }, /BRAND_COLOR: must be a #rrggbb colour/],
    // What an unquoted BRAND_COLOR=#b3261e in an env file reads as.
    ["an empty colour", { BRAND_COLOR: "" }, /BRAND_COLOR: is empty: quote it in an env file/],
    ["a missing logo", { BRAND_LOGO: path.join(work, "missing.svg") }, /BRAND_LOGO: .*missing\.svg cannot be read \(ENOENT\)/],
    ["a logo over 100 kB", { BRAND_LOGO: big }, /BRAND_LOGO: .*big\.svg: 100\d{3} bytes is over the 100000-byte limit/],
    ["a logo neither SVG nor PNG", { BRAND_LOGO: path.join(work, "logo.gif") }, /BRAND_LOGO: .*logo\.gif: neither a PNG nor an SVG/],
    [
      "a scripted SVG logo",
      { BRAND_LOGO: path.join(work, "evil.svg") },
      /BRAND_LOGO: .*evil\.svg: an SVG with a <script> element is refused/,
    ],
  ];

  test.beforeAll(() => {
    fs.writeFileSync(big, SVG.replace("</svg>", `<!--${"x".repeat(100_000)}--></svg>`));
    fs.writeFileSync(path.join(work, "logo.gif"), "GIF89a\x01\x00\x01\x00");
    fs.writeFileSync(path.join(work, "evil.svg"), SVG.replace("<rect", "<script>alert(document.domain)</script><rect"));
  });

  for (const [name, env, message] of cases) {
    test(`exits 1 for ${name}, naming the variable, and never listens`, async () => {
      const port = await freePort();
      const envFile = newInstance(`refused-${cases.findIndex((c) => c[0] === name)}`, port, []);
      const server = startServer(envFile, { ...env, LOG_LEVEL: "warn" });
      const code = await Promise.race([server.exited, new Promise((resolve) => setTimeout(() => resolve("timeout"), 90_000))]);
      if (code === "timeout") server.child.kill("SIGKILL");
      expect(code, server.output()).toBe(1);
      expect(server.output()).toMatch(/Gatehouse cannot start: /);
      expect(server.output()).toMatch(message);
      expect(server.output()).not.toMatch(/listening on/);
    });
  }
});

test.afterAll(() => fs.rmSync(work, { recursive: true, force: true }));
