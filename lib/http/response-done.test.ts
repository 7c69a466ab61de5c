import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import net from "node:net";
import { setImmediate as turn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { leftSignal, whenDone } from "./response-done.mjs";

type Arrival = { req: IncomingMessage; res: ServerResponse };

/** A server that hands each request to the test and answers none of them itself. */
async function holdingServer() {
  const arrivals: Arrival[] = [];
  const waiting: Array<() => void> = [];
  const server = createServer((req, res) => {
    arrivals.push({ req, res });
    waiting.splice(0).forEach((wake) => wake());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  const arrived = async (count: number) => {
    while (arrivals.length < count) await new Promise<void>((resolve) => waiting.push(resolve));
    return arrivals;
  };
  return { server, port, arrived };
}

/** Two requests written at once on one connection: the second's response queues behind the first's. */
async function pipelined(port: number) {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  socket.write("GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n");
  return socket;
}

const closed = (req: IncomingMessage) =>
  req.socket.destroyed && req.socket.closed ? Promise.resolve() : new Promise<void>((resolve) => req.socket.once("close", () => resolve()));

describe("whenDone", () => {
  let stop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await stop?.();
    stop = null;
  });

  async function start() {
    const held = await holdingServer();
    stop = () => new Promise<void>((resolve) => held.server.close(() => resolve()));
    held.server.closeAllConnections?.();
    return held;
  }

  it("runs once when a response is sent", async () => {
    const { port, arrived } = await start();
    const socket = net.connect(port, "127.0.0.1");
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    const [{ req, res }] = (await arrived(1)) as [Arrival];
    let runs = 0;
    whenDone(req, res, () => runs++);
    res.end("ok");
    await new Promise<void>((resolve) => res.once("close", () => resolve()));
    await turn();
    socket.destroy();
    await closed(req);
    await turn();
    expect(runs).toBe(1);
  });

  it("runs for a pipelined response queued behind another when its socket dies", async () => {
    const { port, arrived } = await start();
    const socket = await pipelined(port);
    const [, second] = (await arrived(2)) as [Arrival, Arrival];
    const left = leftSignal(second.req, second.res);
    let runs = 0;
    whenDone(second.req, second.res, () => runs++);
    socket.destroy();
    await closed(second.req);
    await turn();
    expect(left.aborted).toBe(true);
    expect(runs).toBe(1);
  });

  it("runs for one registered after the socket died (the door's device lookup outlived the client)", async () => {
    const { port, arrived } = await start();
    const socket = await pipelined(port);
    const [, second] = (await arrived(2)) as [Arrival, Arrival];
    // The serve path: its left signal first, then the door's lookup, during which the client goes.
    const left = leftSignal(second.req, second.res);
    socket.destroy();
    await closed(second.req);
    await turn();
    expect(left.aborted).toBe(true);
    expect(second.res.destroyed || second.res.writableEnded).toBe(false);
    let runs = 0;
    whenDone(second.req, second.res, () => runs++);
    await turn();
    await turn();
    expect(runs).toBe(1);
    // It stays once: nothing later runs it again.
    second.res.destroy();
    await turn();
    expect(runs).toBe(1);
  });
});
