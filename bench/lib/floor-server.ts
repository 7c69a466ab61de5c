/**
 * The floor of part 2: a bare Node http server, in a process of its own (so its CPU is read from
 * /proc like the app server's), that answers every request with one fixed reply: the refusal the
 * app's fast path sends, copied header for header. Nothing can refuse for less in Node.
 * Input (argv[2], JSON): { port, status, headers, body }. Prints `listening` when ready.
 */
import http from "node:http";

type FloorInput = { port: number; status: number; headers: Record<string, string>; body: string };

const input = JSON.parse(process.argv[2] ?? "") as FloorInput;
const server = http.createServer((request, response) => {
  request.resume();
  response.writeHead(input.status, input.headers);
  response.end(input.body);
});
// The app server's keep-alive bound (server.mjs).
server.keepAliveTimeout = 5_000;
server.listen(input.port, "127.0.0.1", () => console.log("listening"));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  process.exit(0);
});
