import { describe, expect, it } from "vitest";
import type { LimitResult } from "@/lib/rate-limit/limiter";
import { defaultPolicies } from "@/lib/rate-limit/policies";
import { parseTrustedProxies, resolveClientAddress, type ClientAddress } from "./client-address";
import { FastPathCache, nextLikeAnswer, type FastRoute, type HeaderReader } from "./fast-path";
import { REFUSE } from "./refusals";
import { requestPath } from "./request-path.mjs";
import { apiSecurityHeaders } from "./security-headers";

const PEER = "x-gatehouse-peer";
const ROUTES: FastRoute[] = [
  { method: "POST", path: "/api/auth/callback/credentials", style: "browser" },
  { method: "GET", path: "/api/altcha/challenge", style: "browser" },
];

function setup(options: { trusted?: string; maxEntries?: number } = {}) {
  let nowMs = 1_000_000;
  const trustedProxies = parseTrustedProxies(options.trusted ?? "");
  const clientAddress = (headers: HeaderReader) => resolveClientAddress(headers, { trustedProxies, peerHeader: PEER });
  const cache = new FastPathCache(ROUTES, clientAddress, () => nowMs, options.maxEntries ?? 1_000, true);
  return { cache, clientAddress, advance: (ms: number) => (nowMs += ms) };
}

const headersFrom = (peer: string, extra: Record<string, string> = {}) => new Headers({ [PEER]: peer, ...extra });
const refused = (retryAfterMs: number, storeFailed = false): LimitResult => ({
  allowed: false,
  remaining: 0,
  retryAfterMs,
  resetAfterMs: retryAfterMs,
  policy: defaultPolicies.signInAddress,
  storeFailed,
});
const client = (address: string): ClientAddress => ({ address, key: address, source: "socket" });

describe("FastPathCache (the fast path's memory)", () => {
  it("answers a refusal it already rendered at once, not in a promise, and renders once a second", async () => {
    const { cache, advance } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(29_500));
    const first = cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7"));
    expect(first).toBeInstanceOf(Promise);
    const rendered = await first;
    const again = cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7"));
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toBe(rendered);
    advance(1_000);
    const nextSecond = cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7"));
    expect(nextSecond).toBeInstanceOf(Promise);
    expect((await nextSecond)?.headers["retry-after"]).toBe("29");
  });

  it("sends the plain body for an Accept-Encoding too long to be a browser's, without parsing it", async () => {
    const { cache } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(29_500));
    const long = `${Array.from({ length: 1_800 }, (_, i) => `x${i};q=0.5`).join(", ")}, gzip`;
    const answer = await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7", { "accept-encoding": long }));
    expect(answer?.status).toBe(429);
    expect(answer?.headers["Content-Encoding"]).toBeUndefined();
  });

  it("reads each Accept-Encoding as negotiator does, however often it is seen", async () => {
    const { cache } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(29_500));
    const encodings: [string | undefined, boolean][] = [
      ["gzip", true],
      ["gzip;q=0", false],
      ["br, gzip;q=0.5", true],
      ["identity", false],
      [undefined, false],
      ["*", true],
      ["*;q=0", false],
    ];
    for (let round = 0; round < 3; round++)
      for (const [acceptEncoding, gzip] of encodings) {
        const extra: Record<string, string> = acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding };
        const answer = await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7", extra));
        expect(answer?.headers["Content-Encoding"], `${acceptEncoding} (round ${round})`).toBe(gzip ? "gzip" : undefined);
      }
  });

  it("answers exactly what the route answers: status, headers and body", async () => {
    const { cache } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(29_500));
    const answer = await cache.answer("POST", "/api/auth/callback/credentials?x=1", headersFrom("203.0.113.7"));
    const route = REFUSE.browser(refused(29_500));
    expect(answer?.status).toBe(429);
    expect(answer?.body).toBe(await route.text());
    const routeHeaders: Record<string, string> = { ...apiSecurityHeaders(true) };
    route.headers.forEach((value, name) => (routeHeaders[name] = value));
    // Plus what Next.js adds on the way out (compared over HTTP in e2e/refusal-fast-path.spec.ts).
    expect(answer?.headers).toEqual({ ...routeHeaders, Vary: expect.stringContaining("Accept-Encoding") });
    expect(answer?.headers["retry-after"]).toBe("30");
  });

  it("gzips the body when the client takes gzip, as Next.js does", async () => {
    const { cache } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(29_500));
    const answer = await cache.answer(
      "POST",
      "/api/auth/callback/credentials",
      headersFrom("203.0.113.7", { "accept-encoding": "gzip, deflate, br" }),
    );
    expect(answer?.headers["Content-Encoding"]).toBe("gzip");
    const { gunzipSync } = await import("node:zlib");
    expect(JSON.parse(gunzipSync(answer!.body as Buffer).toString())).toMatchObject({ error: "rate_limited", retryAfterSeconds: 30 });
  });

  it("renders a refusal once per Retry-After second, and anew when the second changes", async () => {
    const { cache, advance } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(29_500));
    const first = await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7"));
    advance(400);
    // Still 30 s to go when rounded up: the same bytes, not a new render.
    expect(await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7"))).toBe(first);
    advance(200);
    const later = await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7"));
    expect(later?.headers["retry-after"]).toBe("29");
    expect(JSON.parse(later!.body as string)).toMatchObject({ retryAfterSeconds: 29 });
    // A gzip client asking in the same second gets the same refusal, compressed.
    const zipped = await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7", { "accept-encoding": "gzip" }));
    const { gunzipSync } = await import("node:zlib");
    expect(gunzipSync(zipped!.body as Buffer).toString()).toBe(later!.body);
    expect(later?.headers["Content-Encoding"]).toBeUndefined();
  });

  it("never answers for another address, another route or method, or after the retry time", async () => {
    const { cache, advance } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(10_000));
    expect(await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.8"))).toBeNull();
    expect(await cache.answer("GET", "/api/altcha/challenge", headersFrom("203.0.113.7"))).toBeNull();
    expect(await cache.answer("GET", "/api/auth/callback/credentials", headersFrom("203.0.113.7"))).toBeNull();
    expect(await cache.answer("POST", "/api/auth/callback/credentials/", headersFrom("203.0.113.7"))).toBeNull();
    expect(await cache.answer("POST", "/api/v1/authentication/token", headersFrom("203.0.113.7"))).toBeNull();
    advance(9_999);
    expect((await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7")))?.headers["retry-after"]).toBe("1");
    advance(1);
    expect(await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("203.0.113.7"))).toBeNull();
  });

  it("remembers no outage answers (the fail mode decides each request anew) and no unknown clients", async () => {
    const { cache } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(5_000, true));
    cache.remember("/api/auth/callback/credentials", { address: "unknown", key: "unknown", source: "unknown" }, refused(5_000));
    expect(cache.size).toBe(0);
  });

  it("keys a client behind a trusted proxy by its forwarded address, exactly as the route does", async () => {
    const { cache, clientAddress } = setup({ trusted: "10.0.0.0/8" });
    const behindProxy = new Headers({ [PEER]: "10.0.0.2", "x-forwarded-for": "198.51.100.1, 203.0.113.9" });
    cache.remember("/api/altcha/challenge", clientAddress(behindProxy), refused(60_000));
    expect(await cache.answer("GET", "/api/altcha/challenge", behindProxy)).not.toBeNull();
    // The proxy's other clients, and the proxy itself, are not refused.
    expect(await cache.answer("GET", "/api/altcha/challenge", headersFrom("10.0.0.2", { "x-forwarded-for": "203.0.113.10" }))).toBeNull();
    expect(await cache.answer("GET", "/api/altcha/challenge", headersFrom("10.0.0.2"))).toBeNull();
    // A client cannot name the refused address to get someone else's answer… or escape its own.
    expect(
      await cache.answer("GET", "/api/altcha/challenge", headersFrom("203.0.113.50", { "x-forwarded-for": "203.0.113.9" })),
    ).toBeNull();
  });

  // Attacker review of record 42: Next.js routes a request target by its WHATWG-normalised path, so
  // these spellings reach the sign-in's handler through Next.js's router; matched by the raw
  // target, they skipped this answer (and server.mjs's in-front call): a refused address paid
  // about 17x the CPU per request, a never-seen one about 2x, at the attacker's choice.
  it("answers every spelling of the path that Next.js routes to the same handler (server.mjs's requestPath)", async () => {
    const { cache } = setup();
    cache.remember("/api/auth/callback/credentials", client("203.0.113.7"), refused(10_000));
    for (const url of [
      "/api/auth/callback/./credentials",
      "/api/auth/x/../callback/credentials",
      "/api/auth/callback/%2e/credentials",
      "/./api/auth/callback/credentials",
      "/api/auth/callback/credentials#x",
    ])
      expect((await cache.answer("POST", requestPath(url)!, headersFrom("203.0.113.7")))?.status, url).toBe(429);
  });

  // The second attacker review: another site's request never meets the address's budget (the route
  // answers it 403 and counts it on crossSiteRefusals), so the address's refusal must not answer it.
  it("lets another site's request from a refused address go on to the CSRF rule, none of its refusals remembered", async () => {
    const crossSite = (headers: HeaderReader) => headers.get("sec-fetch-site") === "cross-site";
    const cache = new FastPathCache(
      [{ method: "POST", path: "/api/auth/callback/credentials", style: "browser" }],
      (headers) => resolveClientAddress(headers, { trustedProxies: [], peerHeader: PEER }),
      () => 1_000_000,
      1_000,
      true,
      undefined,
      undefined,
      undefined,
      [{ method: "POST", path: "/api/auth/callback/credentials", style: "browser", refusedSender: crossSite }],
    );
    cache.remember("/api/auth/callback/credentials", client("203.0.113.9"), refused(30_000));
    const headers = new Headers({ [PEER]: "203.0.113.9", "sec-fetch-site": "cross-site" });
    expect(await cache.answer("POST", "/api/auth/callback/credentials", headers)).toBeNull();
    expect((await cache.answer("POST", "/api/auth/callback/credentials", new Headers({ [PEER]: "203.0.113.9" })))?.status).toBe(429);
  });

  it("stays bounded under 1,000,000 refused addresses", async () => {
    const { cache } = setup({ maxEntries: 10_000 });
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 1_000_000; i++) {
      const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      cache.remember("/api/auth/callback/credentials", client(address), refused(60_000));
    }
    expect(cache.size).toBeLessThanOrEqual(10_000);
    // 10,000 entries at a few hundred bytes each: far below 1,000,000 of them.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
    // The newest are kept; the oldest were evicted.
    expect(await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("10.15.66.63"))).not.toBeNull();
    expect(await cache.answer("POST", "/api/auth/callback/credentials", headersFrom("10.0.0.0"))).toBeNull();
  });

  it("answers an address's spent CSRF refusals for the requests the route's rule refuses only, never its own pages'", async () => {
    let nowMs = 1_000_000;
    const clientAddress = (headers: HeaderReader) => resolveClientAddress(headers, { trustedProxies: [], peerHeader: PEER });
    const crossSite = (headers: HeaderReader) => headers.get("sec-fetch-site") === "cross-site";
    const path = "/api/auth/callback/credentials";
    const cache = new FastPathCache(ROUTES, clientAddress, () => nowMs, 1_000, true, undefined, undefined, undefined, [
      { method: "POST", path, style: "browser", refusedSender: crossSite },
    ]);
    cache.rememberRefusedSender("POST", path, client("203.0.113.7"), refused(30_000));
    const from = (site: string, peer = "203.0.113.7") => cache.answer("POST", path, headersFrom(peer, { "sec-fetch-site": site }));
    expect((await from("cross-site"))?.status).toBe(429);
    expect(await from("same-origin")).toBeNull();
    expect(await from("cross-site", "203.0.113.8")).toBeNull();
    // An address whose own budget is spent: its pages' requests are answered so, another site's go on to the rule.
    cache.remember(path, client("203.0.113.9"), refused(30_000));
    expect((await from("same-origin", "203.0.113.9"))?.status).toBe(429);
    expect(await from("cross-site", "203.0.113.9")).toBeNull();
    nowMs += 30_000;
    expect(await from("cross-site")).toBeNull();
  });
});

describe("nextLikeAnswer", () => {
  // RFC 9110 12.5.3: a coding with q=0 is "not acceptable"; Next.js's compression then sends identity.
  it("sends no gzip to a client that refuses it with q=0", async () => {
    const answer = await nextLikeAnswer(Response.json({ ok: true }), true, "gzip;q=0, identity");
    expect(answer.headers["Content-Encoding"]).toBeUndefined();
    expect(answer.body).toBe('{"ok":true}');
  });
});
