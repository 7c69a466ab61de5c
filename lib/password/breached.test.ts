import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { passwordSha1, rangeBreachCheck } from "./breached";

const LEAKED = "velvet harbour quince 1931";

/** A range service that learns of a leak later: it answers what `leaked` holds at each request. */
function service(leaked: string[]) {
  const asked: string[] = [];
  const fetchRange = (async (url: string | URL | Request) => {
    const prefix = String(url).slice(-5);
    asked.push(prefix);
    const lines = leaked
      .map(passwordSha1)
      .filter((hash) => hash.startsWith(prefix))
      .map((hash) => `${hash.slice(5)}:7`);
    return new Response([...lines, `${"F".repeat(35)}:0`].join("\r\n"), { status: 200 });
  }) as typeof fetch;
  return { asked, fetchRange };
}

describe("the range cache (BREACHED_PASSWORDS_CACHE_SECONDS)", () => {
  it("keeps a range for cacheMs on the injected clock, then asks again and finds a later leak", async () => {
    let nowMs = 1_000_000;
    const leaked: string[] = [];
    const { asked, fetchRange } = service(leaked);
    const check = rangeBreachCheck({
      url: "http://ranges.test",
      timeoutMs: 1_000,
      cacheMs: 60_000,
      clock: () => nowMs,
      onUnavailable: () => {},
      onVerdict: () => {},
      fetch: fetchRange,
    });

    expect(await check.check(LEAKED)).toBe("not_found");
    leaked.push(LEAKED);
    nowMs += 59_000;
    expect(await check.check(LEAKED)).toBe("not_found");
    expect(asked).toHaveLength(1);

    nowMs += 2_000;
    expect(await check.check(LEAKED)).toBe("breached");
    expect(asked).toHaveLength(2);
  });
});

describe("a slow or hanging range service (issue 59)", () => {
  const servers: Server[] = [];
  afterAll(async () => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

  /** A range service on a real socket that answers after `delayMs` (null: accepts and never answers). */
  async function serviceAfter(delayMs: number | null) {
    const server = createServer((_req, res) => {
      if (delayMs === null) return;
      setTimeout(() => res.writeHead(200, { "content-type": "text/plain" }).end(`${"F".repeat(35)}:0`), delayMs).unref();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const checkOn = (url: string, timeoutMs: number) => {
    const reasons: string[] = [];
    const verdicts: string[] = [];
    const check = rangeBreachCheck({
      url,
      timeoutMs,
      cacheMs: 0,
      onUnavailable: (reason) => reasons.push(reason),
      onVerdict: (verdict) => verdicts.push(verdict),
    });
    return { check, reasons, verdicts };
  };

  it("logs a service that never answers as a timeout, not as unreachable", async () => {
    const { check, reasons } = checkOn(await serviceAfter(null), 200);
    expect(await check.check(LEAKED)).toBe("unknown");
    expect(reasons).toEqual(["timeout"]);
  });

  it("counts an answer slower than half the timeout toward the breaker: three in a row open it", async () => {
    // Slow by 100 ms (over half the timeout), and 900 ms short of it: a loaded CI machine once
    // took the 150 ms margin of 250 ms against 400.
    const { check, reasons, verdicts } = checkOn(await serviceAfter(1_100), 2_000);
    // Each slow answer is still used; each is a failure for the breaker.
    for (const password of ["slow one", "slow two", "slow three"]) expect(await check.check(password)).toBe("not_found");
    expect(reasons).toEqual(["slow", "slow", "slow"]);
    const startedMs = Date.now();
    expect(await check.check("slow four")).toBe("unknown");
    expect(verdicts.at(-1)).toBe("skipped");
    // Open: answered at once, not after another slow answer.
    expect(Date.now() - startedMs).toBeLessThan(100);
  }, 15_000);
});
