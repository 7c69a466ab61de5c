import { describe, expect, it } from "vitest";
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
