// The Gatehouse HTTP server: Next.js behind a plain Node server, for one reason.
// Route handlers cannot see the TCP peer address, and `next start` only passes it on in
// X-Forwarded-For when the client did not send that header itself, so a client could choose
// its own rate-limit key. Here the socket address is written into PEER_HEADER on every
// request, overwriting anything the client sent, and lib/http/client-address.ts trusts that
// header only when this server announced it.
import fs from "node:fs";
import { createServer } from "node:http";
import net from "node:net";
import next from "next";

const PEER_HEADER = "x-gatehouse-peer";
// lib/http/refusal-cache.ts publishes its fast path here once the app has started.
const FAST_PATH = Symbol.for("gatehouse.fastPath");
// lib/lifecycle/lifecycle.ts: the draining flag, the grace period and the app's close().
const LIFECYCLE = Symbol.for("gatehouse.lifecycle");
let stopping = false;
const dev = process.argv.includes("--dev");
const port = Number(process.env.PORT ?? 3000);
// The development server signs sessions with a public secret: it listens on this machine only unless told otherwise.
const hostname = process.env.HOST ?? (dev ? "127.0.0.1" : "0.0.0.0");

if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT: expected a port number, got ${JSON.stringify(process.env.PORT)}`);
  process.exit(1);
}

// Lets lib/config/env.ts tell the development server from every other start; no variable can fake it.
if (dev) globalThis[Symbol.for("gatehouse.devServer")] = true;

// The standalone folder (scripts/package-standalone.sh) has no next.config.ts: the build's
// resolved configuration is in required-server-files.json, and Next takes it from this variable,
// as the server.js that Next writes there does. Next then reads no .env file either: the
// environment is the instance's alone (node --env-file, systemd or compose).
if (!dev && !fs.existsSync("next.config.ts") && fs.existsSync(".next/required-server-files.json")) {
  const { config } = JSON.parse(fs.readFileSync(".next/required-server-files.json", "utf8"));
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG ??= JSON.stringify(config);
}

// lib/startup.ts (run by instrumentation.ts) calls this once configuration, database and
// stores are ready, or exits with a message naming the problem. Next starts it without waiting,
// so the listener opens only after it: no half-started server answers in between.
const started = new Promise((resolve) => (globalThis[Symbol.for("gatehouse.started")] = resolve));

const app = next({ dev, hostname, port });
const handle = app.getRequestHandler();
await app.prepare();
if (!dev) await started;
globalThis[Symbol.for("gatehouse.peerHeader")] = PEER_HEADER;

// The fast path reads a few headers by name; Node's parsed headers serve them without copying
// (Node already joins repeated X-Forwarded-For headers with ", ", as Headers.get does).
function headerReader(incoming) {
  return {
    get(name) {
      const value = incoming[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

// The timeouts below are checked every second, not Node's default 30 s.
const server = createServer({ connectionsCheckingInterval: 1_000 }, async (req, res) => {
  req.headers[PEER_HEADER] = req.socket.remoteAddress ?? "";
  // While draining, each answer closes its connection, so the server can close once they are done.
  if (stopping) res.setHeader("Connection", "close");
  // A refusal the limiter already decided for this address and route is answered here, without
  // entering Next.js: a flood of refused requests then costs little more than a bare 429.
  const fast = globalThis[FAST_PATH];
  if (fast) {
    const hit = await fast.answer(req.method ?? "", req.url ?? "", headerReader(req.headers)).catch(() => null);
    if (hit) {
      req.resume();
      res.writeHead(hit.status, hit.headers);
      res.end(hit.body);
      return;
    }
  }
  handle(req, res);
});
// Explicit bounds for slow or malformed clients, tighter than Node's defaults (60 s, 300 s):
// headers must arrive within 10 s, a whole request within 30 s, and an idle keep-alive socket
// closes after 5 s. A slow-body client holds a socket no longer than that.
server.headersTimeout = 10_000;
server.requestTimeout = 30_000;
server.keepAliveTimeout = 5_000;
server.listen(port, hostname, () => {
  console.log(`Gatehouse ${dev ? "(development) " : ""}listening on http://${hostname === "0.0.0.0" ? "localhost" : hostname}:${port}`);
});

// SIGTERM or SIGINT: stop accepting connections, let readiness answer 503, let in-flight
// requests finish for up to SHUTDOWN_GRACE_MS, then close the app's stores and database, and
// exit. A second signal exits at once.
function shutdown(signal) {
  if (stopping) {
    console.log(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  const lifecycle = globalThis[LIFECYCLE];
  const graceMs = lifecycle?.shutdownGraceMs ?? 10_000;
  if (lifecycle) lifecycle.draining = true;
  console.log(`${signal}: draining in-flight requests (up to ${graceMs} ms)`);
  const deadline = setTimeout(() => {
    console.error(`${signal}: requests still open after ${graceMs} ms; closing their connections`);
    server.closeAllConnections();
  }, graceMs);
  // net.Server's close, not http.Server's: that one also destroys every connection it counts as
  // idle, which includes one whose request has arrived but not yet been read (the event loop was
  // busy), and that request would be lost. Keep-alive sockets instead close after their answer
  // (Connection: close, above) or at keepAliveTimeout (5 s), whichever is first.
  net.Server.prototype.close.call(server, async () => {
    clearTimeout(deadline);
    try {
      await lifecycle?.close();
    } catch (error) {
      console.error(`closing: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
    console.log(`${signal}: closed`);
    process.exit(0);
  });
}
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));
