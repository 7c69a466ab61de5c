import net from "node:net";
import { expect, test } from "./helpers/serverGrid";

/** Writes raw bytes to the server and collects what comes back until it closes the socket (or `limitMs`). */
function raw(baseURL: string, chunks: string[], limitMs: number): Promise<{ reply: string; closedAfterMs: number | null }> {
  const { hostname, port } = new URL(baseURL);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(port), hostname);
    let reply = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ reply, closedAfterMs: null });
    }, limitMs);
    socket.on("data", (data) => (reply += data.toString("latin1")));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ reply, closedAfterMs: Date.now() - started });
    });
    socket.on("error", () => {});
    socket.on("connect", () => chunks.forEach((chunk) => socket.write(chunk)));
  });
}

test("a malformed request line gets 400 and the socket closes", async ({ baseURL }) => {
  const { reply, closedAfterMs } = await raw(baseURL!, ["NOT A REQUEST\r\n\r\n"], 5_000);
  expect(reply).toMatch(/^HTTP\/1\.1 400/);
  expect(closedAfterMs).not.toBeNull();
});

test("32 KB of headers gets 431, not a hung socket", async ({ baseURL }) => {
  const { reply } = await raw(
    baseURL!,
    [`POST /api/auth/callback/credentials HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(32 * 1024)}\r\n\r\n`],
    5_000,
  );
  expect(reply).toMatch(/^HTTP\/1\.1 431/);
});

test("headers that never finish are cut off by the first-request deadline (5 s), not held forever", async ({ baseURL }) => {
  test.setTimeout(30_000);
  // A request has not begun until its headers are complete, so SOCKET_FIRST_BYTE_TIMEOUT_MS (5 s)
  // closes this socket before headersTimeout (10 s) would.
  const { closedAfterMs } = await raw(baseURL!, ["POST /api/auth/callback/credentials HTTP/1.1\r\nHost: x\r\n"], 20_000);
  expect(closedAfterMs).not.toBeNull();
  expect(closedAfterMs!).toBeGreaterThanOrEqual(4_500);
  expect(closedAfterMs!).toBeLessThan(11_000);
});
