// @ts-check
// When a response is over for the server's bookkeeping (the door's places): imported by
// server.mjs, which runs outside the build, so it ships beside it (scripts/package-standalone.sh).

/** What each socket runs when it closes: one listener a socket, however many requests it carries. */
/** @type {WeakMap<import("node:net").Socket, Set<() => void>>} */
const onSocketClose = new WeakMap();

/**
 * Runs `then` once, when the response closes or its socket does: Node 20 never closes a pipelined
 * response queued behind another when the socket dies, and the door's count must not leak. A
 * socket already gone runs it at once: its close was emitted, or is, without this callback.
 * @param {import("node:http").IncomingMessage} req
 * @param {import("node:http").ServerResponse} res
 * @param {() => void} then
 */
export function whenDone(req, res, then) {
  const socket = req.socket;
  if (socket.destroyed) return then();
  let pending = onSocketClose.get(socket);
  if (!pending) {
    const callbacks = new Set();
    socket.once("close", () => {
      for (const callback of callbacks) callback();
    });
    onSocketClose.set(socket, (pending = callbacks));
  }
  const callbacks = pending;
  const done = () => {
    res.off("close", done);
    callbacks.delete(done);
    then();
  };
  callbacks.add(done);
  res.once("close", done);
}

/** The signal's reason: nothing reads it, the door asks only whether the signal is aborted. */
const LEFT = "left";

/**
 * Aborted once the client is gone, or the answer has been sent.
 * @param {import("node:http").IncomingMessage} req
 * @param {import("node:http").ServerResponse} res
 */
export function leftSignal(req, res) {
  const left = new AbortController();
  // With a reason of our own: abort() without one makes a DOMException, stack and all, at the end
  // of every request that passed the door (about 1% of a never-seen address's CPU).
  whenDone(req, res, () => left.abort(LEFT));
  return left.signal;
}
