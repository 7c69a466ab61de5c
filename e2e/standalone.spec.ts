import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { solve } from "../tests/helpers/altcha";
import { freePort } from "../tests/helpers/ports";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";
import { healthy, startWithEnvFile, type EnvFileServer } from "./helpers/env-file-server";
import { mailTo, tokenOf } from "./helpers/outbox";

// The deployable artefact, as an operator gets it: `npm run build` (done by `npm run test:e2e`),
// scripts/package-standalone.sh into an empty folder outside the repository (the script the
// Dockerfile runs), `npm run instance -- new`, and a server started there with that env file as
// its whole environment.
const root = path.resolve(__dirname, "..");

type Server = EnvFileServer;

function run(command: string, args: string[], cwd = root): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** `node --env-file=<file> server.mjs` in the packaged folder, started lean, with no other variable than PATH and LEAN_START's. */
const startServer = (folder: string, envFile: string): Server => startWithEnvFile(folder, envFile);

function cookiesOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(";")[0]!)
    .join("; ");
}

async function solvedAltcha(baseURL: string): Promise<string> {
  return solve(await (await fetch(`${baseURL}/api/altcha/challenge`)).json());
}

/**
 * Signs in as the sign-in page does (from its own origin, a solved ALTCHA) and returns the
 * account page's HTML with the session it got. Over HTTP, without a browser: the packaged
 * server is what is under test here, and the browser flows have their own specs.
 */
async function accountPageAfterSignIn(baseURL: string, email: string): Promise<string> {
  const fields = { email, password: PASSWORD, altcha: await solvedAltcha(baseURL), callbackUrl: "/account", json: "true" };
  const signIn = await fetch(`${baseURL}/api/auth/callback/credentials`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: baseURL },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  const session = cookiesOf(signIn);
  expect(session, `sign-in answered ${signIn.status}: ${await signIn.text()}`).toMatch(/session-token=/);
  const account = await fetch(`${baseURL}/account`, { headers: { cookie: session }, redirect: "manual" });
  expect(account.status).toBe(200);
  return account.text();
}

async function stop(server: Server): Promise<number | null> {
  if (server.child.exitCode === null) server.child.kill("SIGTERM");
  return server.exited;
}

/** The env file with one variable replaced (or dropped when value is undefined). */
function variant(envFile: string, name: string, value: string | undefined): string {
  const lines = fs
    .readFileSync(envFile, "utf8")
    .split("\n")
    .filter((line) => !line.startsWith(`${name}=`));
  const file = `${envFile}.${name.toLowerCase()}`;
  fs.writeFileSync(file, [...lines, ...(value === undefined ? [] : [`${name}=${value}`])].join("\n"), { mode: 0o600 });
  return file;
}

test.describe.configure({ mode: "serial" });

let work: string;
let folder: string;
let envFile: string;
let baseURL: string;
const servers: Server[] = [];

test.beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-standalone-"));
  folder = path.join(work, "server");
  fs.mkdirSync(folder);
});

test.afterAll(async () => {
  await Promise.all(servers.map(stop));
  fs.rmSync(work, { recursive: true, force: true });
});

test("the packaged folder runs on its own env file: register, sign in, restart, data kept; bad starts refused", async () => {
  test.setTimeout(300_000);

  await test.step("package into an empty folder that resolves next from its own node_modules", () => {
    run("bash", ["scripts/package-standalone.sh", folder]);
    const resolvedNext = createRequire(path.join(folder, "server.mjs")).resolve("next");
    expect(resolvedNext.startsWith(path.join(folder, "node_modules") + path.sep)).toBe(true);
    expect(path.relative(root, folder).startsWith("..")).toBe(true);
    expect(fs.readdirSync(folder).filter((name) => name.startsWith(".env"))).toEqual([]);
  });

  await test.step("create the instance's env file; a second `new` with the same name is refused", async () => {
    const port = await freePort();
    baseURL = `http://127.0.0.1:${port}`;
    const instances = path.join(work, "instances");
    const args = ["run", "-s", "instance", "--", "new", "acme", "--dir", instances, "--url", baseURL];
    run("npm", args);
    envFile = path.join(instances, "acme", "gatehouse.env");
    const again = spawnSync("npm", args, { cwd: root, encoding: "utf8" });
    expect(again.status).not.toBe(0);
    expect(again.stderr).toContain("exists");
  });

  const email = uniqueEmail("standalone");

  await test.step("start, register and sign in", async () => {
    const server = startServer(folder, envFile);
    servers.push(server);
    await healthy(baseURL, server);
    const registered = await fetch(`${baseURL}/api/register`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: baseURL },
      body: JSON.stringify({ email, password: PASSWORD, altcha: await solvedAltcha(baseURL) }),
    });
    expect(registered.status).toBe(202);
    // No mail server: the instance's outbox (MAIL_OUTBOX_DIR in its env file) holds the link.
    const outbox = /^MAIL_OUTBOX_DIR=(.+)$/m.exec(fs.readFileSync(envFile, "utf8"))?.[1];
    expect(outbox).toBeTruthy();
    const { link } = await mailTo(email, /confirm your email/i, 15_000, outbox!);
    const verified = await fetch(`${baseURL}/api/email/verify`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: baseURL },
      body: JSON.stringify({ token: tokenOf(link), password: PASSWORD }),
    });
    expect(verified.status).toBe(200);
    expect(await accountPageAfterSignIn(baseURL, email)).toContain(email);

    await test.step("a second server on the same data folder is refused, and the first one keeps serving", async () => {
      const second = startServer(folder, variant(envFile, "PORT", String(await freePort())));
      servers.push(second);
      expect(await second.exited).not.toBe(0);
      expect(second.output()).toContain("is in use by another process");
      expect(second.output()).not.toContain("listening");
      expect((await fetch(`${baseURL}/api/health`)).ok).toBe(true);
    });

    expect(await stop(server)).toBe(0);
    expect(server.output()).toContain("SIGTERM: closed");
  });

  await test.step("start again: the account is still there", async () => {
    const server = startServer(folder, envFile);
    servers.push(server);
    await healthy(baseURL, server);
    expect(await accountPageAfterSignIn(baseURL, email)).toContain(email);
    expect(await stop(server)).toBe(0);
  });

  await test.step("a short or missing secret: a message naming it, a non-zero exit, never a listener", async () => {
    for (const value of ["too-short", undefined]) {
      const server = startServer(folder, variant(envFile, "NEXTAUTH_SECRET", value));
      servers.push(server);
      expect(await server.exited).not.toBe(0);
      expect(server.output()).toContain("NEXTAUTH_SECRET");
      expect(server.output()).not.toContain("listening");
    }
  });
});
