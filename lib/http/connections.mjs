// @ts-check
// Who may hold the server's connections. server.mjs runs it before the app loads, so it is plain
// JavaScript beside lib/server-contract.mjs, and it takes its clock and settings as arguments.

/** @typedef {{ remoteAddress?: string | undefined; destroy(): void }} Connection */
/** @typedef {"share" | "cap"} Reason */
/** @typedef {import("../server-contract.mjs").ConnectionStats} ConnectionStats */

/**
 * Node's own `maxConnections` closes the *new* socket past the cap, so one client that holds its
 * connections open (silent, or idle keep-alive, and reopened as soon as they close) leaves every
 * new visitor outside. Here a client's share and the server's cap are kept apart:
 * - one key (a client address) holds at most `perAddress` connections. Its next one is refused,
 *   unless its oldest idle connection has been idle for `staleMs`: that one is closed instead (a
 *   crowd behind one address recycles its idle keep-alives). Refusing the newest, not closing the
 *   oldest at once, is what stops a client that reopens whatever it loses from turning the share
 *   into a loop of new requests: a refused socket costs an accept, a closed one a request;
 * - from `reclaimAt` (90% of the cap) on, each new connection closes the oldest idle one of the
 *   key that holds the most, idle for `minIdleMs` at least (one just accepted, or just answered,
 *   may be a visitor whose request the loop has not read yet), so a flood of idle keep-alives
 *   makes room before the cap is hit;
 * - at `cap`, the heaviest key's oldest idle one is closed whatever its age; with none idle, the
 *   connection that has been receiving its request longest, for `staleMs` at least (a client
 *   sending its body a byte at a time holds a busy slot until requestTimeout, and many of them,
 *   from many addresses, would fill the cap); a new connection is refused only when every open
 *   one is busy with a request that has arrived, or with one that began less than `staleMs` ago.
 * A connection counts under the key `admit` is given (the client's key: an IPv6 client's /64), or
 * its socket address; a null key is a trusted proxy's, which carries many clients: no share
 * applies to it, only the cap. `allowance` multiplies a key's share (TRUSTED_NETWORKS).
 * @param {{ cap: number; perAddress: number; staleMs?: number; minIdleMs?: number; onFull?: (stats: ConnectionStats) => void; nowMs?: () => number }} options
 */
export function connectionGuard({ cap, perAddress, staleMs = 2_000, minIdleMs = 1_000, onFull = () => {}, nowMs = Date.now }) {
  /** @type {Map<string, Set<Connection>>} insertion order: oldest first */
  const byAddress = new Map();
  /** @type {Map<Connection, { sinceMs: number; receiving: () => boolean }>} busy with a request: since when, and whether it is still arriving */
  const busy = new Map();
  /** @type {WeakMap<Connection, string>} */
  const addressOf = new WeakMap();
  /** @type {WeakMap<Connection, number>} when each became idle (connected, or answered) */
  const idleSince = new WeakMap();
  const reclaimAt = Math.max(1, Math.floor(cap * 0.9));
  let open = 0;
  let lastFullMs = -Infinity;
  const reclaimed = { share: 0, cap: 0 };
  const refused = { share: 0, cap: 0 };

  /** @param {Connection} connection */
  function forget(connection) {
    const address = addressOf.get(connection);
    if (address === undefined) return;
    addressOf.delete(connection);
    busy.delete(connection);
    const held = byAddress.get(address);
    if (held?.delete(connection)) {
      open--;
      if (held.size === 0) byAddress.delete(address);
    }
  }

  /** The connection of `held` idle the longest. @param {Set<Connection>} held */
  function stalestIdle(held) {
    /** @type {Connection | undefined} */
    let found;
    let since = Infinity;
    for (const connection of held) {
      if (busy.has(connection)) continue;
      const at = idleSince.get(connection) ?? Infinity;
      if (at < since) {
        found = connection;
        since = at;
      }
    }
    return found;
  }

  /** The first connection of `held` idle since `idleBy` or before. @param {Set<Connection> | undefined} held @param {number} idleBy */
  function oldestIdle(held, idleBy) {
    if (held)
      for (const connection of held) if (!busy.has(connection) && (idleSince.get(connection) ?? Infinity) <= idleBy) return connection;
    return undefined;
  }

  /** The oldest idle connection (idle since `idleBy` or before) of the key that holds the most, among keys with one (ties: the first found). @param {number} idleBy */
  function heaviestIdle(idleBy) {
    /** @type {Connection | undefined} */
    let found;
    let most = 0;
    for (const held of byAddress.values()) {
      if (held.size <= most) continue;
      const idle = oldestIdle(held, idleBy);
      if (idle) {
        found = idle;
        most = held.size;
      }
    }
    return found;
  }

  /** The busy connection still receiving its request that began longest ago, before `beganBy`. @param {number} beganBy */
  function slowestArriving(beganBy) {
    /** @type {Connection | undefined} */
    let found;
    let since = Infinity;
    for (const [connection, request] of busy) {
      if (request.sinceMs <= beganBy && request.sinceMs < since && request.receiving()) {
        found = connection;
        since = request.sinceMs;
      }
    }
    return found;
  }

  /** @param {Connection} connection @param {Reason} reason */
  function reclaim(connection, reason) {
    forget(connection);
    reclaimed[reason]++;
    connection.destroy();
  }

  function tellFull() {
    const now = nowMs();
    // Once per 10 s at most: a flood at the cap must not become a flood of log lines.
    if (now - lastFullMs < 10_000) return;
    lastFullMs = now;
    onFull(stats());
  }

  /** @returns {ConnectionStats} */
  function stats() {
    return { open, cap, perAddress, addresses: byAddress.size, reclaimed: { ...reclaimed }, refused: { ...refused }, full: open >= cap };
  }

  return {
    /**
     * A new connection: true to keep it (it is counted from now), false when the caller must
     * close it. Makes room first, as above.
     * @param {Connection} connection
     * @param {string | null | undefined} [key] its client's key; null: a trusted proxy's
     * @param {number} [allowance] how many shares the key may hold (TRUSTED_NETWORKS)
     */
    admit(connection, key, allowance = 1) {
      const exempt = key === null;
      const address = exempt ? PROXIES : (key ?? connection.remoteAddress ?? "");
      const held = byAddress.get(address);
      const now = nowMs();
      if (held && held.size >= perAddress * allowance && !exempt) {
        const own = stalestIdle(held);
        if (!own || now - (idleSince.get(own) ?? now) < staleMs) {
          refused.share++;
          return false;
        }
        reclaim(own, "share");
      }
      if (open >= reclaimAt) {
        const room =
          heaviestIdle(now - minIdleMs) ?? (open >= cap ? (heaviestIdle(Infinity) ?? slowestArriving(now - staleMs)) : undefined);
        if (room) reclaim(room, "cap");
      }
      if (open >= cap) {
        refused.cap++;
        tellFull();
        return false;
      }
      if (open + 1 >= cap) tellFull();
      addressOf.set(connection, address);
      idleSince.set(connection, now);
      const set = byAddress.get(address) ?? new Set();
      set.add(connection);
      byAddress.set(address, set);
      open++;
      return true;
    },
    /**
     * A request began on it: it is not reclaimed until `idle`, unless it is still arriving
     * `staleMs` later when the cap is reached.
     * @param {Connection} connection
     * @param {() => boolean} [receiving] whether the request's body is still arriving
     */
    busy(connection, receiving = () => false) {
      if (addressOf.has(connection)) busy.set(connection, { sinceMs: nowMs(), receiving });
    },
    /** Its request was answered. @param {Connection} connection */
    idle(connection) {
      if (busy.delete(connection)) idleSince.set(connection, nowMs());
    },
    /** @param {Connection} connection */
    isBusy(connection) {
      return busy.has(connection);
    },
    /** It closed (either end). @param {Connection} connection */
    closed(connection) {
      forget(connection);
    },
    stats,
  };
}

/** Trusted proxies' connections, counted together (no key of a client can equal it). */
const PROXIES = "\u0000trusted-proxies";

/** Descriptors kept back from the connection cap for the database's files, logs and outgoing sockets. */
export const RESERVED_DESCRIPTORS = 128;

/**
 * The connection cap this process can really hold: MAX_CONNECTIONS, lowered to what the soft
 * limit on open files leaves once the reserve is kept (each connection is a descriptor; past the
 * limit `accept` fails before any cap is checked, and a new visitor is refused by the kernel).
 * @param {number} configured
 * @param {number | null} softLimit
 */
export function effectiveCap(configured, softLimit) {
  if (softLimit === null || !Number.isFinite(softLimit)) return configured;
  return Math.max(1, Math.min(configured, softLimit - RESERVED_DESCRIPTORS));
}

/**
 * The soft limit on open files from /proc/self/limits (Linux), or null where it cannot be read.
 * @param {string | null} limitsText
 * @returns {number | null}
 */
export function openFilesSoftLimit(limitsText) {
  const line = limitsText?.split("\n").find((row) => row.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  if (!soft || soft === "unlimited") return null;
  const value = Number(soft);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}
