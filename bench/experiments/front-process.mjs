// Record 43's experiment (issue 61), not part of Gatehouse; bench/experiments/front-process.sh
// installs it as server.mjs in a copy of a build. A front process without Next.js: it answers a
// sign-in refusal it has seen the child's fast path send, for that client, until its Retry-After,
// and proxies every other request to the build's own server (child-server.mjs). It does the least
// a real front would: no device-cookie check, no CSRF step, no language, no metrics; so what it
// measures is a lower bound of a front's cost per refusal, and the whole cost of its hop.
import http from "node:http";
import net from "node:net";
import { spawn } from "node:child_process";

const SIGN_IN = "POST /api/auth/callback/credentials";
const port = Number(process.env.PORT);
const host = process.env.HOST ?? "127.0.0.1";
const childPort = await new Promise((resolve) => {
  const probe = net.createServer().listen(0, "127.0.0.1", () => {
    const { port: free } = /** @type {net.AddressInfo} */ (probe.address());
    probe.close(() => resolve(free));
  });
});
// As every deployment starts server.mjs (lib/server-contract.mjs: LEAN_START).
const child = spawn(process.execPath, ["--max-semi-space-size=2", "child-server.mjs"], {
  // On loopback only: the child believes the peer the front names (x-front-peer).
  env: { ...process.env, PORT: String(childPort), HOST: "127.0.0.1" },
  stdio: "inherit",
});
child.on("exit", (code) => process.exit(code ?? 1));
let answeredHere = 0;
for (const signal of ["SIGTERM", "SIGINT"])
  process.on(signal, () => {
    console.error(`front-process: ${answeredHere} refusals answered in front`);
    child.kill(signal);
  });

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const trusted = new Set((process.env.TRUSTED_PROXIES ?? "").split(",").map((peer) => peer.trim()));
/** Client of each peer and X-Forwarded-For seen (the last hop, as one trusted proxy writes it). */
const clients = new Map();
/** @param {http.IncomingMessage} req */
function clientOf(req) {
  const peer = req.socket.remoteAddress ?? "";
  const chain = req.headers["x-forwarded-for"];
  if (!trusted.has(peer) || chain === undefined) return peer;
  const key = `${peer}|${chain}`;
  let client = clients.get(key);
  if (client === undefined) {
    client = String(chain).split(",").at(-1)?.trim() ?? peer;
    if (clients.size >= 4096) clients.clear();
    clients.set(key, client);
  }
  return client;
}
/** @type {Map<string, { untilMs: number; status: number; headers: http.OutgoingHttpHeaders; body: Buffer }>} */
const refused = new Map();

const server = http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
  const route = `${req.method} ${(req.url ?? "/").split("?", 1)[0]}`;
  if (route === SIGN_IN && req.headers.cookie === undefined) {
    const hit = refused.get(clientOf(req));
    if (hit !== undefined && hit.untilMs > Date.now()) {
      answeredHere++;
      req.resume();
      res.writeHead(hit.status, hit.headers);
      res.end(hit.body);
      return;
    }
  }
  const upstream = http.request(
    {
      agent,
      host: "127.0.0.1",
      port: childPort,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, "x-front-peer": req.socket.remoteAddress ?? "" },
    },
    (answer) => {
      const headers = { ...answer.headers };
      const fast = headers["x-fast"] !== undefined;
      for (const name of ["x-fast", "connection", "keep-alive"]) delete headers[name];
      const status = answer.statusCode ?? 502;
      if (!(fast && route === SIGN_IN)) {
        res.writeHead(status, headers);
        answer.pipe(res);
        return;
      }
      /** @type {Buffer[]} */
      const chunks = [];
      answer.on("data", (chunk) => chunks.push(chunk));
      answer.on("end", () => {
        const body = Buffer.concat(chunks);
        for (const name of ["content-length", "transfer-encoding"]) delete headers[name];
        const untilMs = Date.now() + Number(headers["retry-after"] ?? 1) * 1000;
        refused.set(clientOf(req), { untilMs, status, headers, body });
        res.writeHead(status, headers);
        res.end(body);
      });
    },
  );
  upstream.on("error", () => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
    res.end('{"error":"upstream"}');
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 5_000;
server.listen(port, host, () => console.log(`front-process listening on ${host}:${port}, Gatehouse on 127.0.0.1:${childPort}`));
