// @ts-check
// The Gatehouse HTTP server: Next.js behind a plain Node server, for one reason.
// Route handlers cannot see the TCP peer address, and `next start` only passes it on in
// X-Forwarded-For when the client did not send that header itself, so a client could choose
// its own rate-limit key. Here the socket address is written into PEER_HEADER on every
// request, overwriting anything the client sent, and lib/http/client-address.ts trusts that
// header only when this server announced it.
import fs from "node:fs";
import { createServer } from "node:http";
import net from "node:net";
import v8 from "node:v8";
import next from "next";
import {
  DEV_SERVER_SYMBOL,
  DOOR_SYMBOL,
  FAST_PATH_SYMBOL,
  IN_FRONT_SYMBOL,
  inheritedListener,
  LIFECYCLE_SYMBOL,
  listenAddress,
  CONNECTIONS_SYMBOL,
  maxConnections,
  maxConnectionsPerAddress,
  localhostRedirect,
  localUrl,
  PEER_HEADER,
  PEER_HEADER_SYMBOL,
  STARTED_SYMBOL,
} from "./lib/server-contract.mjs";
import { leftSignal, whenDone } from "./lib/http/response-done.mjs";
import { requestPath } from "./lib/http/request-path.mjs";
import { connectionGuard, effectiveCap, openFilesSoftLimit } from "./lib/http/connections.mjs";

/** @typedef {{ get(name: string): string | null }} HeaderReader */
/** @typedef {{ status: number; headers: Record<string, string | string[]>; body: string | Buffer }} FastAnswer */
/** @typedef {(incoming: import("node:http").IncomingMessage) => Promise<FastAnswer>} InFrontHandler */
/** @typedef {{ answer(method: string, url: string, headers: HeaderReader): FastAnswer | null | Promise<FastAnswer | null> }} FastPath */
/** @typedef {{ kind: "in"; leave(): void } | { kind: "busy"; answer: FastAnswer } | { kind: "gone" }} DoorPass */
/** @typedef {{ enter(method: string, url: string, headers: HeaderReader, left: () => AbortSignal): Promise<DoorPass> }} Door */
/** @typedef {import("./lib/lifecycle/lifecycle").Lifecycle} Lifecycle */
/** The slots this server reads and writes on globalThis (lib/server-contract.mjs names them). */
const shared =
  /** @type {typeof globalThis & { [FAST_PATH_SYMBOL]?: FastPath; [DOOR_SYMBOL]?: Door | null; [IN_FRONT_SYMBOL]?: Map<string, InFrontHandler>; [LIFECYCLE_SYMBOL]?: Lifecycle; [PEER_HEADER_SYMBOL]?: string; [DEV_SERVER_SYMBOL]?: boolean; [STARTED_SYMBOL]?: (value?: unknown) => void; [CONNECTIONS_SYMBOL]?: unknown }} */ (
    globalThis
  );

// V8 lets the old generation grow up to four times what survived the last full collection
// before collecting again, so a flood of requests from new addresses (each leaving a little
// garbage) grew the heap to 210-315 MiB, about 55 MiB of it alive, and RSS from 247 to 410-535
// MiB. Growing by a fifth at a time kept the flood's peak at 1.25x the idle RSS for about a
// tenth more CPU per answer (bench/RESULTS.md part 11). V8 reads the flag after every full
// collection, so setting it at run time works (the heap's limits, by contrast, are fixed at start).
v8.setFlagsFromString("--heap-growing-percent=20");

let stopping = false;
const dev = process.argv.includes("--dev");
/** @type {{ port: number; hostname: string }} */
let address;
/** @type {number} */
let connectionCap;
/** @type {{ fd: number } | null} */
let inherited;
try {
  address = listenAddress(process.env, { dev });
  connectionCap = maxConnections(process.env);
  inherited = inheritedListener(process.env, process.pid);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
const { port, hostname } = address;

// Lets lib/config/env.ts tell the development server from every other start; no variable can fake it.
if (dev) shared[DEV_SERVER_SYMBOL] = true;
// Without NEXTAUTH_URL, emailed links and next-auth's redirects would name next-auth's fallback,
// http://localhost:3000, whatever PORT says: on the development server they name this server.
// Production requires NEXTAUTH_URL (lib/config/env.ts), so nothing is guessed there.
if (dev && !process.env.NEXTAUTH_URL) process.env.NEXTAUTH_URL = localUrl(address);
const devPublicUrl = dev ? (process.env.NEXTAUTH_URL ?? null) : null;

// A production start runs the configuration the build resolved (required-server-files.json), as
// the server.js Next writes for output: "standalone" does: the standalone folder has no
// next.config.ts, and in the repository it would only be evaluated again to the same result.
// Next takes it from this variable, and without it warns that `next start` does not work with
// output: standalone, which is true of `next start` but not of this server. Next then reads no
// .env file either: the environment is the instance's alone (node --env-file, systemd or compose).
if (!dev && fs.existsSync(".next/required-server-files.json")) {
  const { config } = JSON.parse(fs.readFileSync(".next/required-server-files.json", "utf8"));
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG ??= JSON.stringify(config);
}

// lib/lifecycle/lifecycle.ts (run by instrumentation.ts) calls this once configuration, database and
// stores are ready, or exits with a message naming the problem. Next starts it without waiting,
// so the listener opens only after it: no half-started server answers in between.
const started = new Promise((resolve) => (shared[STARTED_SYMBOL] = resolve));

// Announced before Next.js starts: the Gatehouse reads it once, when it is built, and that happens
// while Next prepares (instrumentation.ts). Only this server takes requests, and it overwrites the
// header on every one, so announcing it early trusts nothing a client wrote.
shared[PEER_HEADER_SYMBOL] = PEER_HEADER;
const app = next({ dev, hostname, port });
const handle = app.getRequestHandler();
await app.prepare();
if (!dev) await started;

// The fast path reads a few headers by name; Node's parsed headers serve them without copying
// (Node already joins repeated X-Forwarded-For headers with ", ", as Headers.get does).
/** @param {import("node:http").IncomingHttpHeaders} incoming */
function headerReader(incoming) {
  return {
    /** @param {string} name */
    get(name) {
      const value = incoming[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

/**
 * @param {import("node:http").IncomingMessage} req
 * @param {import("node:http").ServerResponse} res
 */
async function serve(req, res) {
  // A request began: the first-byte deadline (below) no longer applies to this socket, and the
  // guard does not close it for another until it is answered.
  req.socket.setTimeout(0);
  // Until its body has arrived, a request may be a slow client's: at the cap the guard may close it.
  connections.busy(req.socket, () => !req.complete);
  res.once("close", () => connections.idle(req.socket));
  req.headers[PEER_HEADER] = req.socket.remoteAddress ?? "";
  // The development server lives at http://localhost (passkeys need a domain name): a browser
  // that opened 127.0.0.1 goes there before any cookie is set at the wrong host.
  const home = devPublicUrl === null ? null : localhostRedirect(req.headers.host, req.url ?? "/", devPublicUrl);
  if (home) return answerEarly(req, res, { status: 308, headers: { Location: home, "Cache-Control": "no-store" }, body: "" });
  // While draining, each answer closes its connection, so the server can close once they are done.
  if (stopping) res.setHeader("Connection", "close");
  // The path as Next.js routes it, worked out once: every match below is by it, so no spelling of
  // a path (`/./`, `%2e`, a fragment) reaches the same route by a costlier way.
  const path = requestPath(req.url ?? "/");
  if (path === null) return answerEarly(req, res, NO_PATH);
  // A refusal the limiter already decided for this address and route is answered here, without
  // entering Next.js: a flood of refused requests then costs little more than a bare 429.
  const headers = headerReader(req.headers);
  const fast = shared[FAST_PATH_SYMBOL];
  if (fast) {
    // A refusal already rendered comes back as it is, not in a promise: a flood's requests await nothing.
    let hit = fastAnswer(fast, req.method ?? "", path, headers);
    if (hit instanceof Promise) hit = await hit;
    if (hit) return answerEarly(req, res, hit);
  }
  // While the event loop is busy, a request without a known device waits here before Next.js reads
  // it (lib/http/door.ts), so a flood of strangers cannot take every turn the owner's sign-in needs.
  const door = shared[DOOR_SYMBOL];
  if (door) {
    // The signal only for a request that may wait: an AbortController per request cost about 1% of a never-seen address's CPU.
    const pass = await door.enter(req.method ?? "", path, headers, () => leftSignal(req, res));
    if (pass.kind === "gone") return;
    if (pass.kind === "busy") return answerEarly(req, res, pass.answer);
    // The client may have left while the door looked its device up (a pipelined request's
    // response may still look open then): its place is given back now, and Next.js is not run.
    if (req.socket.destroyed || res.destroyed || res.writableEnded) return pass.leave();
    whenDone(req, res, pass.leave);
  }
  // A route that published its handler is answered by it here, as Next.js would have called it,
  // without Next.js's router (docs/decisions/0042): a never-seen address's sign-in costs what
  // Gatehouse's layers cost, not Next.js's per-request work on top.
  const inFront = shared[IN_FRONT_SYMBOL]?.get(`${req.method} ${path}`);
  if (inFront) return answerEarly(req, res, await inFront(req));
  await handle(req, res);
}

/**
 * The fast path's answer, or null when it has none or fails (the request then goes on to the route,
 * whose limiter decides): a promise only when the fast path had to render its answer.
 * @param {FastPath} fast
 * @param {string} method
 * @param {string} path
 * @param {HeaderReader} headers
 * @returns {FastAnswer | null | Promise<FastAnswer | null>}
 */
function fastAnswer(fast, method, path, headers) {
  try {
    const hit = fast.answer(method, path, headers);
    return hit instanceof Promise ? hit.catch(() => null) : hit;
  } catch {
    return null;
  }
}

/**
 * A request target that is no path (`*`, or not a URL): Next.js threw on it, a 500 and a stack trace
 * in the log for each one.
 * @type {FastAnswer}
 */
const NO_PATH = {
  status: 400,
  headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  body: JSON.stringify({ error: "invalid_request", message: "The request's target is not a path." }),
};

/**
 * An answer decided in front of Next.js; the body is not read, or no more of it (a route answered
 * in front may have stopped reading at its size limit).
 * @param {import("node:http").IncomingMessage} req
 * @param {import("node:http").ServerResponse} res
 * @param {FastAnswer} answer
 */
function answerEarly(req, res, answer) {
  req.resume();
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

// The timeouts below are checked every second, not Node's default 30 s.
const server = createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
  // Next answers its own errors; one that escapes it must not be an unhandled rejection, which
  // would end the process and every request in flight with it.
  serve(req, res).catch((error) => {
    console.error(`request: ${error instanceof Error ? error.message : String(error)}`);
    if (res.headersSent) res.destroy();
    else
      res
        .writeHead(500, { "Content-Type": "application/json" })
        .end(JSON.stringify({ error: "internal", message: "Something went wrong on our side. Try again later." }));
  });
});
// Explicit bounds for slow or malformed clients, tighter than Node's defaults (60 s, 300 s):
// headers must arrive within 5 s, a whole request (headers and body; a sign-in's is under 1 KiB)
// within 10 s, and an idle keep-alive socket closes after 5 s. A slow-body client holds a socket
// no longer than that (the attacker review of issue 59: at 30 s, slow bodies from a few addresses
// could hold the guard's slots), and the guard may close it sooner at the cap. The answer's time
// is not bounded here: Node stops counting once the request has arrived.
server.headersTimeout = 5_000;
server.requestTimeout = 10_000;
server.keepAliveTimeout = 5_000;
// MAX_CONNECTIONS (default 1024, lowered to what the open-files limit leaves) and a share of it
// per client address: past either, idle connections are closed first (the holder's own, then the
// biggest holder's), so a client holding and reopening connections cannot shut new visitors out.
const limitsText = (() => {
  try {
    return fs.readFileSync("/proc/self/limits", "utf8");
  } catch {
    return null;
  }
})();
const heldCap = effectiveCap(connectionCap, openFilesSoftLimit(limitsText));
if (heldCap < connectionCap)
  console.warn(`MAX_CONNECTIONS ${connectionCap} is more than the open-files limit leaves: holding at most ${heldCap} connections`);
// A quarter of what the process can hold, unless MAX_CONNECTIONS_PER_ADDRESS says otherwise.
const perAddressCap = maxConnectionsPerAddress(process.env, heldCap);
const connections = connectionGuard({
  cap: heldCap,
  perAddress: perAddressCap,
  onFull: (stats) =>
    console.error(
      JSON.stringify({
        level: "error",
        event: "connection_limit_reached",
        open: stats.open,
        cap: stats.cap,
        perAddress: stats.perAddress,
        addresses: stats.addresses,
        reclaimed: stats.reclaimed,
        refused: stats.refused,
      }),
    ),
});
shared[CONNECTIONS_SYMBOL] = connections;
// headersTimeout starts at the first byte, so a connection that never sends one would stay open
// for ever, holding a file descriptor: enough of them and nobody can connect. Each socket gets a
// short deadline for its first request; the "timeout" handler above closes it when it passes.
const firstByteTimeoutMs = shared[LIFECYCLE_SYMBOL]?.firstByteTimeoutMs ?? 5_000;
// A socket's timeout (the first-byte deadline, or Node's keep-alive timeout) closes it unless a
// request is under way. Decided in the check phase, after a poll phase: on a loop busy for longer
// than the deadline, the timer runs before the poll that would read a request already waiting.
server.on("timeout", (socket) =>
  setImmediate(() => {
    if (!connections.isBusy(socket)) socket.destroy();
  }),
);
let lastAcceptAt = 0;
server.on("connection", (socket) => {
  lastAcceptAt = Date.now();
  // Counted under its client's key once the app has said which peers are trusted proxies.
  const counted = shared[LIFECYCLE_SYMBOL]?.connectionKey(socket.remoteAddress ?? "");
  if (!connections.admit(socket, counted?.key, counted?.allowance)) {
    socket.destroy();
    return;
  }
  socket.once("close", () => connections.closed(socket));
  socket.setTimeout(firstByteTimeoutMs);
});
// Too many open files: log it (once a second at most) rather than let the error end the process.
let listening = false;
let lastAcceptError = 0;
server.on("error", (error) => {
  if (/** @type {NodeJS.ErrnoException} */ (error).syscall === "listen" || !listening) throw error;
  if (Date.now() - lastAcceptError > 1_000) console.error(`accept: ${error.message}`);
  lastAcceptError = Date.now();
});
const announce = () => {
  listening = true;
  const where = inherited ? `the socket systemd passed (fd ${inherited.fd})` : localUrl(address);
  console.log(`Gatehouse ${dev ? "(development) " : ""}listening on ${where}`);
};
if (inherited) server.listen(inherited, announce);
else server.listen(port, hostname, announce);

// SIGTERM or SIGINT: readiness answers 503 at once, and the listener keeps accepting for
// SHUTDOWN_DELAY_MS, every answer closing its connection: a load balancer needs that long to see
// the 503 and stop sending, and closing at once would reset every connection the kernel had
// already accepted into the backlog. Then the listener closes, in-flight requests have up to
// SHUTDOWN_GRACE_MS to finish, the app closes its stores and database, and the process exits.
// A second signal exits at once.
/** @param {string} signal */
function shutdown(signal) {
  if (stopping) {
    console.log(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  const lifecycle = shared[LIFECYCLE_SYMBOL];
  const graceMs = lifecycle?.shutdownGraceMs ?? 10_000;
  const delayMs = lifecycle?.shutdownDelayMs ?? 0;
  if (lifecycle) lifecycle.draining = true;
  console.log(`${signal}: readiness 503; accepting for ${delayMs} ms more, then draining in-flight requests (up to ${graceMs} ms)`);
  setTimeout(() => whenBacklogQuiet(Date.now() + graceMs, () => stopAccepting(signal, graceMs, lifecycle)), delayMs);
}

// A busy event loop (20 sign-ins in flight on 2 cores) accepts waiting connections a few per
// turn, so when the delay ends some may still sit in the kernel's backlog, and closing then resets
// them. Close once no connection has been accepted for BACKLOG_QUIET_MS (at most until `latest`,
// for a balancer that never stops sending), and from the check phase, after a poll phase has
// accepted what was pending.
const BACKLOG_QUIET_MS = 500;
/**
 * @param {number} latest
 * @param {() => void} then
 */
function whenBacklogQuiet(latest, then) {
  if (Date.now() - lastAcceptAt >= BACKLOG_QUIET_MS || Date.now() >= latest) setImmediate(then);
  else setTimeout(() => whenBacklogQuiet(latest, then), 100);
}

/**
 * @param {string} signal
 * @param {number} graceMs
 * @param {Lifecycle | undefined} lifecycle
 */
function stopAccepting(signal, graceMs, lifecycle) {
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
