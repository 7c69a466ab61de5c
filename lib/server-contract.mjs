// @ts-check
// What server.mjs and the app share. server.mjs is plain JavaScript that Node runs before Next.js
// has loaded any app code, so the names they agree on live here, in a file both can import.

/** The request header server.mjs overwrites with the socket's address on every request. */
export const PEER_HEADER = "x-gatehouse-peer";

/** globalThis slots: server.mjs announces the peer header and the development server; the app publishes its fast path, door and lifecycle. */
export const PEER_HEADER_SYMBOL = Symbol.for("gatehouse.peerHeader");
export const DEV_SERVER_SYMBOL = Symbol.for("gatehouse.devServer");
export const FAST_PATH_SYMBOL = Symbol.for("gatehouse.fastPath");
/** The door (lib/http/door.ts): strangers wait there while the event loop is busy. */
export const DOOR_SYMBOL = Symbol.for("gatehouse.door");
/** Routes server.mjs answers itself, with the route's own handler (lib/auth/in-front.ts). */
export const IN_FRONT_SYMBOL = Symbol.for("gatehouse.inFront");
export const LIFECYCLE_SYMBOL = Symbol.for("gatehouse.lifecycle");
/** server.mjs puts a resolve function here and listens only once lib/lifecycle calls it (the app started). */
export const STARTED_SYMBOL = Symbol.for("gatehouse.started");
/** server.mjs's connection guard (lib/http/connections.mjs), whose counts the metrics read. */
export const CONNECTIONS_SYMBOL = Symbol.for("gatehouse.connections");

/**
 * What the connection guard counts: open connections, its bounds, and those it closed to make room
 * (reclaimed: an idle one; refused: a new one), by the limit reached.
 * @typedef {{
 *   open: number; cap: number; perAddress: number; addresses: number;
 *   reclaimed: { share: number; cap: number }; refused: { share: number; cap: number }; full: boolean;
 * }} ConnectionStats
 */

/**
 * What the connection guard counts now, or null outside server.mjs (tests, `next dev` alone).
 * @returns {ConnectionStats | null}
 */
export function connectionStats() {
  const guard = /** @type {{ stats(): ConnectionStats } | undefined} */ (
    /** @type {Record<symbol, unknown>} */ (globalThis)[CONNECTIONS_SYMBOL]
  );
  return guard ? guard.stats() : null;
}

/**
 * PORT and HOST, the two settings read before the app (and lib/config/env.ts) can load. The
 * development server signs sessions with a public secret, so it listens on this machine only
 * unless HOST says otherwise.
 * @param {Record<string, string | undefined>} env
 * @param {{ dev: boolean }} options
 * @returns {{ port: number; hostname: string }}
 */
export function listenAddress(env, { dev }) {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT: expected a port number, got ${JSON.stringify(env.PORT)}`);
  return { port, hostname: env.HOST ?? (dev ? "127.0.0.1" : "0.0.0.0") };
}

/** MAX_CONNECTIONS's default and bounds (lib/config/env.ts validates the same at start). */
export const DEFAULT_MAX_CONNECTIONS = 1024;
export const MAX_CONNECTIONS_LIMIT = 1_000_000;

/**
 * The cap on open connections (server.mjs's connection guard, lib/http/connections.mjs: idle ones
 * give way first). Without one, a flood of idle or slow connections costs memory and file
 * descriptors until the process fails for everyone. Read here, not from lib/config, because the
 * server is set up before the app loads.
 * @param {Record<string, string | undefined>} env
 * @returns {number}
 */
export function maxConnections(env) {
  const raw = env.MAX_CONNECTIONS;
  if (raw === undefined || raw === "") return DEFAULT_MAX_CONNECTIONS;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1 || value > MAX_CONNECTIONS_LIMIT)
    throw new Error(`MAX_CONNECTIONS: expected a whole number from 1 to ${MAX_CONNECTIONS_LIMIT}, got ${JSON.stringify(raw)}`);
  return value;
}

/** The listening addresses a browser on this machine reaches as `localhost`. */
const LOCAL_ADDRESSES = new Set(["0.0.0.0", "::", "127.0.0.1", "::1"]);

/**
 * MAX_CONNECTIONS_PER_ADDRESS: the open connections one client address may hold before its own
 * oldest idle one is closed for its next; by default a quarter of the cap, so one client holding
 * and reopening its connections leaves three quarters to everyone else.
 * @param {Record<string, string | undefined>} env
 * @param {number} cap
 * @returns {number}
 */
export function maxConnectionsPerAddress(env, cap) {
  const raw = env.MAX_CONNECTIONS_PER_ADDRESS;
  if (raw === undefined || raw === "") return Math.max(1, Math.floor(cap / 4));
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1 || value > MAX_CONNECTIONS_LIMIT)
    throw new Error(`MAX_CONNECTIONS_PER_ADDRESS: expected a whole number from 1 to ${MAX_CONNECTIONS_LIMIT}, got ${JSON.stringify(raw)}`);
  return Math.min(value, cap);
}

/**
 * The address a browser on this machine opens for a server listening on `hostname:port`: the
 * development server's public URL when NEXTAUTH_URL is unset, so its emailed links and
 * next-auth's redirects point at the port it really listens on (PORT=3139 means :3139). A
 * loopback or wildcard address is named `localhost`: browsers make passkeys for a domain name
 * only, never for an IP address, and count http://localhost as secure.
 * @param {{ port: number; hostname: string }} address
 * @returns {string}
 */
export function localUrl({ port, hostname }) {
  const host = LOCAL_ADDRESSES.has(hostname) ? "localhost" : hostname.includes(":") ? `[${hostname}]` : hostname;
  return `http://${host}:${port}`;
}

/**
 * Where the development server sends a browser that opened it by a loopback address (the
 * `Host` header 127.0.0.1:3000 or [::1]:3000) while its public URL is http://localhost: its
 * cookies, emailed links and next-auth's redirects all live at localhost, and a session begun
 * at 127.0.0.1 would be lost at the first redirect. Null when the request is already there.
 * @param {string | undefined} host
 * @param {string} url
 * @param {string} publicUrl
 * @returns {string | null}
 */
export function localhostRedirect(host, url, publicUrl) {
  if (host === undefined || !URL.canParse(publicUrl)) return null;
  const target = new URL(publicUrl);
  if (target.hostname !== "localhost") return null;
  const match = /^(127\.0\.0\.1|\[::1\])(?::(\d+))?$/.exec(host);
  if (!match || (match[2] ?? "80") !== (target.port || "80")) return null;
  return `${target.origin}${url.startsWith("/") ? url : "/"}`;
}

/** The first file descriptor systemd passes (SD_LISTEN_FDS_START, sd_listen_fds(3)). */
const SD_LISTEN_FDS_START = 3;

/**
 * The listening socket systemd passed (socket activation: LISTEN_FDS, for this process's
 * LISTEN_PID), or null to open PORT/HOST. systemd keeps the socket across a restart, so
 * connections that arrive while no process runs wait in its backlog instead of being refused.
 * @param {Record<string, string | undefined>} env
 * @param {number} pid
 * @returns {{ fd: number } | null}
 */
export function inheritedListener(env, pid) {
  if (!env.LISTEN_FDS) return null;
  if (env.LISTEN_PID !== undefined && Number(env.LISTEN_PID) !== pid) return null;
  const count = Number(env.LISTEN_FDS);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`LISTEN_FDS: expected a count of sockets, got ${JSON.stringify(env.LISTEN_FDS)}`);
  // One socket is all Gatehouse serves: the .socket unit names one ListenStream.
  return { fd: SD_LISTEN_FDS_START };
}

/**
 * How the server process is started, wherever it is (npm start, the Dockerfile, the systemd unit, the
 * operator's command in docs/deployment.md, the bench): V8's young generation held to 2 MiB
 * semi-spaces (Node's default grows them to 16 MiB, 32 MiB resident between collections), and
 * glibc's mmap threshold fixed at 128 KiB (its dynamic threshold otherwise rises after the first
 * large buffers are freed, and later ones stay in the heap's arenas). Both are read when the process
 * starts, before server.mjs runs, so they are part of the command, not settings it could apply.
 * Together: 258 → 210 MiB resident after warm-up, 318 → 263 MiB at a flood's peak, for about 7% more
 * CPU per Argon2id hash (docs/decisions/0012-start-lean.md). tests/start-commands.test.ts keeps every
 * start command saying the same.
 */
export const LEAN_START = Object.freeze({
  nodeFlags: Object.freeze(["--max-semi-space-size=2"]),
  environment: Object.freeze({ MALLOC_MMAP_THRESHOLD_: "131072" }),
});

/**
 * The POSIX shell command that starts server.mjs lean, with `nodeArgs` (such as --env-file=…) before
 * it. An argument with a space or another character the shell reads is single-quoted.
 * @param {string[]} nodeArgs
 * @returns {string}
 */
export function leanStartCommand(nodeArgs = []) {
  const quoted = (/** @type {string} */ word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`);
  const variables = Object.entries(LEAN_START.environment).map(([name, value]) => `${name}=${value}`);
  return [...variables, "node", ...LEAN_START.nodeFlags, ...nodeArgs.map(quoted), "server.mjs"].join(" ");
}
