// @ts-check
// What server.mjs and the app share. server.mjs is plain JavaScript that Node runs before Next.js
// has loaded any app code, so the names they agree on live here, in a file both can import.

/** The request header server.mjs overwrites with the socket's address on every request. */
export const PEER_HEADER = "x-gatehouse-peer";

/** globalThis slots: server.mjs announces the peer header and the development server; the app publishes its fast path and lifecycle. */
export const PEER_HEADER_SYMBOL = Symbol.for("gatehouse.peerHeader");
export const DEV_SERVER_SYMBOL = Symbol.for("gatehouse.devServer");
export const FAST_PATH_SYMBOL = Symbol.for("gatehouse.fastPath");
export const LIFECYCLE_SYMBOL = Symbol.for("gatehouse.lifecycle");
/** server.mjs puts a resolve function here and listens only once lib/lifecycle calls it (the app started). */
export const STARTED_SYMBOL = Symbol.for("gatehouse.started");

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

/**
 * The address a browser on this machine opens for a server listening on `hostname:port`: the
 * development server's public URL when NEXTAUTH_URL is unset, so its emailed links and
 * next-auth's redirects point at the port it really listens on (PORT=3139 means :3139).
 * @param {{ port: number; hostname: string }} address
 * @returns {string}
 */
export function localUrl({ port, hostname }) {
  const host = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : hostname.includes(":") ? `[${hostname}]` : hostname;
  return `http://${host}:${port}`;
}
