/**
 * Runs autocannon floods in a process of its own (started by bench/lib/cannon.ts), so that the
 * flood's client work never shares an event loop with the bench's legitimate users, whose
 * latencies would otherwise measure the load generator. Reads one CannonInput per stdin line and
 * runs them one at a time: prints a `start` line as the flood begins and one JSON result line at
 * its end. A `stop` line ends the running flood early (its result is printed as usual). Exits
 * when stdin closes.
 */
import readline from "node:readline";
import autocannon, { type Instance, type RawRequest, type RequestSpec } from "autocannon";

/**
 * What to send: one fixed request; the same request from a new address each time (request n from
 * 10.0.0.0/8's n-th address, up to 16.7 million); or the sign-in spray (a new username per request).
 */
export type CannonLoad =
  | { kind: "fixed"; method: "GET" | "POST"; path: string; headers?: Record<string, string>; body?: string }
  | { kind: "distinct"; method: "GET" | "POST"; path: string; headers?: Record<string, string>; body?: string; firstAddress?: number }
  | {
      kind: "spray";
      path: string;
      /** Cookie and content type; X-Forwarded-For is set per request from `addresses`. */
      headers: Record<string, string>;
      csrfToken: string;
      /** ALTCHA solutions; past the pool they repeat (replays). */
      pool: string[];
      /** Request n comes from addresses[n % addresses.length]. */
      addresses: string[];
    };

export type CannonInput = {
  url: string;
  connections: number;
  durationSeconds: number;
  maxRequests: number;
  load: CannonLoad;
  /** Stops early once this many answers had this status. */
  stopAt?: { status: number; count: number };
};

export type CannonOutput = {
  statuses: Record<string, number>;
  durationSeconds: number;
  latencyP50: number;
  latencyP99: number;
  errors: number;
  timeouts: number;
};

function sprayBody(n: number, load: Extract<CannonLoad, { kind: "spray" }>): string {
  return new URLSearchParams({
    email: `spray-${n}@example.com`,
    password: "wrong-password-123",
    csrfToken: load.csrfToken,
    altcha: load.pool[n % load.pool.length]!,
    callbackUrl: "/",
    json: "true",
  }).toString();
}

function requestSpec(load: CannonLoad): RequestSpec {
  if (load.kind === "fixed") return { method: load.method, path: load.path, headers: load.headers, body: load.body };
  let sent = 0;
  if (load.kind === "distinct") {
    return {
      method: load.method,
      path: load.path,
      headers: load.headers,
      body: load.body,
      setupRequest: (request: RawRequest): RawRequest => {
        // From `firstAddress` on, so that a later flood against the same server sends new addresses too.
        const n = (load.firstAddress ?? 0) + sent++;
        return { ...request, headers: { ...load.headers, "x-forwarded-for": `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` } };
      },
    };
  }
  return {
    method: "POST",
    path: load.path,
    headers: load.headers,
    setupRequest: (request: RawRequest): RawRequest => {
      const n = sent++;
      return {
        ...request,
        headers: { ...load.headers, "x-forwarded-for": load.addresses[n % load.addresses.length]! },
        body: sprayBody(n, load),
      };
    },
  };
}

let running: Instance | undefined;

async function flood(input: CannonInput): Promise<CannonOutput> {
  const host = new URL(input.url).hostname;
  if (host !== "127.0.0.1" && host !== "localhost") throw new Error(`the bench only talks to loopback, not ${host}`);
  const statuses: Record<string, number> = {};
  console.log(JSON.stringify({ start: true }));
  const instance: Instance = autocannon({
    url: input.url,
    connections: input.connections,
    duration: input.durationSeconds,
    maxOverallRequests: input.maxRequests,
    timeout: 10,
    requests: [requestSpec(input.load)],
  });
  running = instance;
  instance.on("response", (_client: unknown, statusCode: number) => {
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    if (input.stopAt && (statuses[input.stopAt.status] ?? 0) >= input.stopAt.count) instance.stop();
  });
  const result = await instance;
  running = undefined;
  return {
    statuses,
    durationSeconds: result.duration,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

async function main(): Promise<void> {
  let queue = Promise.resolve();
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line.trim() === "stop") running?.stop();
    else if (line.trim() !== "") {
      const input = JSON.parse(line) as CannonInput;
      // One flood at a time, in the order asked.
      queue = queue.then(async () => console.log(JSON.stringify(await flood(input))));
    }
  });
  await new Promise<void>((resolve) => lines.once("close", resolve));
  await queue;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
