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

/** Sends `head` at once, then one byte of `body` every `everyMs`, and reports the answer and when the server closed the socket. */
function trickle(baseURL: string, head: string, body: string, everyMs: number, limitMs: number) {
  const { hostname, port } = new URL(baseURL);
  return new Promise<{ reply: string; closedAfterMs: number | null; bytesSent: number }>((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(port), hostname);
    let reply = "";
    let sent = 0;
    let ticker: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      clearInterval(ticker);
      socket.destroy();
      resolve({ reply, closedAfterMs: null, bytesSent: sent });
    }, limitMs);
    socket.on("data", (data) => (reply += data.toString("latin1")));
    socket.on("close", () => {
      clearTimeout(timer);
      clearInterval(ticker);
      resolve({ reply, closedAfterMs: Date.now() - started, bytesSent: sent });
    });
    socket.on("error", () => {});
    socket.on("connect", () => {
      socket.write(head);
      ticker = setInterval(() => {
        if (sent < body.length && !socket.destroyed) socket.write(body[sent++]!);
      }, everyMs);
    });
  });
}

test("a body sent a byte at a time is cut off at requestTimeout (10 s) with 408, not held for 30 s", async ({ baseURL }) => {
  test.setTimeout(60_000);
  // The attacker review of issue 59: slow bodies, each a busy connection, could hold the connection
  // guard's slots for as long as requestTimeout allowed.
  const body = JSON.stringify({ email: "slow@example.com", password: "x".repeat(200), altcha: "y".repeat(400) });
  const head = `POST /api/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const { reply, closedAfterMs, bytesSent } = await trickle(baseURL!, head, body, 500, 30_000);
  expect(closedAfterMs, "the server closes the socket").not.toBeNull();
  expect(closedAfterMs!).toBeGreaterThanOrEqual(9_000);
  expect(closedAfterMs!).toBeLessThan(13_000);
  expect(bytesSent).toBeLessThan(body.length);
  expect(reply).toMatch(/^HTTP\/1\.1 408/);
});

test("headers sent a byte at a time are cut off at headersTimeout (5 s), though each byte resets the idle deadline", async ({
  baseURL,
}) => {
  test.setTimeout(60_000);
  const headers = `POST /api/register HTTP/1.1\r\nHost: x\r\nX-Padding: ${"a".repeat(200)}\r\n\r\n`;
  const { closedAfterMs, bytesSent } = await trickle(baseURL!, "P", headers.slice(1), 400, 30_000);
  expect(closedAfterMs, "the server closes the socket").not.toBeNull();
  expect(closedAfterMs!).toBeLessThan(8_000);
  expect(bytesSent).toBeLessThan(headers.length - 1);
});
