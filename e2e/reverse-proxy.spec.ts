import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { freshPostgres, postgresUrl, type TestDatabase } from "../tests/helpers/databases";
import { freePort } from "../tests/helpers/ports";
import { redisUrl, testKeyPrefix } from "../tests/helpers/redis";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, test } from "./helpers/serverGrid";

/**
 * Debian's nginx as a real reverse proxy in front of two instances on one PostgreSQL and one
 * Redis, writing X-Forwarded-For the standard way ($proxy_add_x_forwarded_for). Each client
 * connects from a loopback address of its own (127.0.0.2, 127.0.0.3, …, bound as the socket's
 * local address), so the address nginx appends is the client's, as on a real network.
 */

const NGINX = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"].find((candidate) => fs.existsSync(candidate));
// Per address: ten, then 429 (a minute's window, so a slow machine still sees the limit).
const CHALLENGE_LIMIT = 10;

/** TRUSTED_PROXIES as docs/deployment.md's nginx example sets it (so the document is what is tested). */
function trustedProxiesFromDocs(): string {
  const doc = fs.readFileSync("docs/deployment.md", "utf8");
  const start = doc.indexOf("## Behind a reverse proxy");
  if (start < 0) throw new Error('docs/deployment.md has no "## Behind a reverse proxy" section');
  const value = /^TRUSTED_PROXIES=(\S+)$/m.exec(doc.slice(start))?.[1];
  if (!value) throw new Error("docs/deployment.md's reverse-proxy section has no TRUSTED_PROXIES= line");
  return value;
}

type Proxy = { port: number; stop(): Promise<void>; log(): string };

/** nginx as a private process: its own prefix, configuration and logs in a temp dir, a free port. */
async function startNginx(upstreams: string[]): Promise<Proxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-nginx-"));
  // Workers may run as nobody when the test runs as root: they must be able to use the temp paths.
  fs.chmodSync(dir, 0o777);
  const port = await freePort();
  const config = `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 128; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream gatehouse {
${upstreams.map((upstream) => `    server ${upstream};`).join("\n")}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://gatehouse;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # Which instance answered, so the test can see both of them serve one client.
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`;
  const configFile = path.join(dir, "nginx.conf");
  fs.writeFileSync(configFile, config);
  let output = "";
  const child: ChildProcess = spawn(NGINX!, ["-p", dir, "-e", path.join(dir, "error.log"), "-c", configFile, "-g", "daemon off;"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const log = () => output + (fs.existsSync(path.join(dir, "error.log")) ? fs.readFileSync(path.join(dir, "error.log"), "utf8") : "");
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${log()}`);
    try {
      if ((await get(port, "/api/health", "127.0.0.1")).status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`nginx did not start: ${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    port,
    log,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

type Answer = { status: number; headers: http.IncomingHttpHeaders };

/** One GET on a fresh connection from `localAddress` (a loopback address of the client's own). */
function get(port: number, pathname: string, localAddress: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, path: pathname, localAddress, headers, agent: false }, (response) => {
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    request.on("error", reject);
    request.end();
  });
}

/** Challenges from one client until the first 429: how many were served, by which instances. */
async function untilLimited(port: number, localAddress: string, forged?: () => string) {
  const upstreams = new Set<string>();
  for (let served = 0; served <= CHALLENGE_LIMIT * 3; served++) {
    const answer = await get(port, "/api/altcha/challenge", localAddress, forged ? { "X-Forwarded-For": forged() } : {});
    if (answer.status === 429) return { served, upstreams, retryAfter: answer.headers["retry-after"] };
    expect(answer.status).toBe(200);
    upstreams.add(String(answer.headers["x-upstream"]));
  }
  return { served: Number.POSITIVE_INFINITY, upstreams, retryAfter: undefined };
}

test.describe("behind Debian's nginx, two instances on one PostgreSQL and Redis", () => {
  test.describe.configure({ mode: "serial" });
  let database: TestDatabase;
  const instances: Instance[] = [];
  let proxy: Proxy;

  test.beforeAll(async () => {
    test.setTimeout(150_000);
    const pg = postgresUrl();
    const redis = redisUrl();
    test.skip(!pg || !redis, "needs TEST_DATABASE_URL and TEST_REDIS_URL (CI sets both)");
    if (!NGINX && process.env.CI === "true") throw new Error("nginx is missing: .ci/run installs nginx-light");
    test.skip(!NGINX, "needs nginx (apt-get install nginx-light)");
    database = await freshPostgres(pg!);
    const env = {
      ...sharedSecrets(),
      DATABASE_URL: database.url,
      RATE_LIMIT_STORE: "redis",
      REDIS_URL: redis!,
      RATE_LIMIT_KEY_PREFIX: testKeyPrefix(),
      RATE_LIMIT_ALTCHA_CHALLENGE: `${CHALLENGE_LIMIT}/1m`,
      TRUSTED_PROXIES: trustedProxiesFromDocs(),
    };
    for (let i = 0; i < 2; i++) instances.push(await startInstance(env));
    proxy = await startNginx(instances.map((instance) => new URL(instance.baseURL).host));
  });

  test.afterAll(async () => {
    await proxy?.stop();
    await Promise.all(instances.splice(0).map((instance) => instance.stop()));
    await database?.dispose();
  });

  test("limits each client as itself, with one limit across both instances", async () => {
    const first = await untilLimited(proxy.port, "127.0.0.2");
    // Ten in all, served by both instances: the shared store counts them as one client's.
    expect(first.served).toBe(CHALLENGE_LIMIT);
    expect(first.upstreams.size).toBe(2);
    expect(Number(first.retryAfter)).toBeGreaterThan(0);
    // Another client behind the same proxy is not in that bucket.
    expect((await get(proxy.port, "/api/altcha/challenge", "127.0.0.3")).status).toBe(200);
  });

  test("ignores a client's own X-Forwarded-For: forging fresh addresses buys nothing, and spends no one else's", async () => {
    let n = 0;
    // Each request claims to come from 127.0.0.5 or a fresh address; nginx appends the real one.
    const forged = () => (n++ % 2 === 0 ? "127.0.0.5" : `198.51.100.${n}`);
    const forger = await untilLimited(proxy.port, "127.0.0.4", forged);
    expect(forger.served).toBe(CHALLENGE_LIMIT);
    expect((await get(proxy.port, "/api/altcha/challenge", "127.0.0.5")).status).toBe(200);
  });

  test("takes no forwarded address from a client that bypasses the proxy", async () => {
    const { port } = new URL(instances[0]!.baseURL);
    let n = 0;
    const direct = await untilLimited(Number(port), "127.0.0.6", () => `203.0.113.${++n}`);
    expect(direct.served).toBe(CHALLENGE_LIMIT);
  });
});
