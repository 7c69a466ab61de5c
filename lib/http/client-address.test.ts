import { afterEach, describe, expect, it } from "vitest";
import {
  clientAddressResolver,
  MALFORMED_HOP_KEY,
  PEER_HEADER_SYMBOL,
  parseTrustedProxies,
  peerHeaderFromServer,
  resolveClientAddress,
  type TrustedProxies,
} from "@/lib/http/client-address";

const PEER = "x-gatehouse-peer";

function request(peer: string | undefined, extra: [string, string][] = []): Headers {
  const headers = new Headers();
  if (peer !== undefined) headers.set(PEER, peer);
  for (const [name, value] of extra) headers.append(name, value);
  return headers;
}

function resolve(headers: Headers, trusted = "", ipv6PrefixLength?: number) {
  const trustedProxies: TrustedProxies = parseTrustedProxies(trusted);
  return resolveClientAddress(headers, {
    trustedProxies,
    peerHeader: PEER,
    ...(ipv6PrefixLength === undefined ? {} : { ipv6PrefixLength }),
  });
}

describe("resolveClientAddress: untrusted peer", () => {
  it("ignores X-Forwarded-For and X-Real-IP sent by a client that is not a trusted proxy", () => {
    const headers = request("203.0.113.9", [
      ["x-forwarded-for", "198.51.100.1"],
      ["x-real-ip", "198.51.100.2"],
    ]);
    expect(resolve(headers, "10.0.0.0/8")).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "socket" });
  });

  it("ignores a forwarded chain even when it names trusted proxies", () => {
    const headers = request("203.0.113.9", [["x-forwarded-for", "198.51.100.1, 10.0.0.1"]]);
    expect(resolve(headers, "10.0.0.0/8")).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "socket" });
  });

  it("treats every peer as the client when no proxy is trusted", () => {
    const headers = request("10.0.0.1", [["x-forwarded-for", "198.51.100.1"]]);
    expect(resolve(headers, "")).toEqual({ address: "10.0.0.1", key: "10.0.0.1", source: "socket" });
  });
});

describe("resolveClientAddress: trusted proxies", () => {
  const trusted = "10.0.0.0/8, 192.0.2.7, 2001:db8:ffff::/48";

  it("reads X-Forwarded-For right to left, skipping trusted hops (several proxies, CIDR)", () => {
    // 198.51.100.1 was written by the client itself; 203.0.113.9 is what our first proxy saw.
    const headers = request("10.0.0.2", [["x-forwarded-for", "198.51.100.1, 203.0.113.9, 192.0.2.7, 10.1.2.3"]]);
    expect(resolve(headers, trusted)).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "forwarded" });
  });

  it("joins repeated X-Forwarded-For headers in order", () => {
    const headers = request("10.0.0.2", [
      ["x-forwarded-for", "198.51.100.1, 203.0.113.9"],
      ["x-forwarded-for", "10.9.9.9"],
    ]);
    expect(resolve(headers, trusted)).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "forwarded" });
  });

  it("skips trusted IPv6 hops", () => {
    const headers = request("2001:db8:ffff:1::5", [["x-forwarded-for", "203.0.113.9, 2001:db8:ffff:2::1"]]);
    expect(resolve(headers, trusted)).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "forwarded" });
  });

  it("takes the left-most entry when every hop is trusted", () => {
    const headers = request("10.0.0.2", [["x-forwarded-for", "10.4.4.4, 192.0.2.7, 10.1.2.3"]]);
    expect(resolve(headers, trusted)).toEqual({ address: "10.4.4.4", key: "10.4.4.4", source: "forwarded" });
  });

  it("uses the peer when a trusted proxy sends no X-Forwarded-For, ignoring X-Real-IP", () => {
    const headers = request("10.0.0.2", [["x-real-ip", "198.51.100.2"]]);
    expect(resolve(headers, trusted)).toEqual({ address: "10.0.0.2", key: "10.0.0.2", source: "socket" });
  });

  it("reads a hop written with its port (ip:port, [v6]:port) or in brackets as its address", () => {
    const cases: [string, string, string][] = [
      ["203.0.113.7:40001", "203.0.113.7", "203.0.113.7"],
      ["203.0.113.7:0", "203.0.113.7", "203.0.113.7"],
      ["[2001:db8:1:2::7]:443", "2001:db8:1:2::7", "2001:db8:1:2::/64"],
      ["[2001:db8:1:2::7]", "2001:db8:1:2::7", "2001:db8:1:2::/64"],
      ["[::ffff:203.0.113.8]:8080", "203.0.113.8", "203.0.113.8"],
    ];
    for (const [hop, address, key] of cases) {
      const headers = request("10.0.0.2", [["x-forwarded-for", `198.51.100.1, ${hop}`]]);
      expect(resolve(headers, trusted), hop).toEqual({ address, key, source: "forwarded" });
    }
    // A trusted proxy written with its port is still skipped as trusted.
    const chain = request("10.0.0.2", [["x-forwarded-for", "198.51.100.1:5000, 10.1.2.3:443"]]);
    expect(resolve(chain, trusted)).toEqual({ address: "198.51.100.1", key: "198.51.100.1", source: "forwarded" });
  });

  it("keys every request with a malformed hop in one shared bucket, never on the proxy's or the last trusted hop's address", () => {
    const bad = [
      "not-an-ip",
      "3232235777",
      "0x7f.1",
      "203.0.113.9:65536",
      "203.0.113.9:",
      "[203.0.113.9]:80",
      "[2001:db8::1]:99999",
      "unknown",
      "_hidden",
      "",
    ];
    for (const hop of bad) {
      for (const forwarded of [`198.51.100.1, ${hop}`, `198.51.100.1, ${hop}, 10.1.2.3`]) {
        const client = resolve(request("10.0.0.2", [["x-forwarded-for", forwarded]]), trusted);
        expect(client, forwarded).toMatchObject({ address: "unknown", source: "malformed", malformedHop: hop });
        // Issue 59: a key per request let malformed hops past every per-address limit.
        expect(client.key, "one shared, fail-closed bucket").toBe(MALFORMED_HOP_KEY);
      }
    }
  });

  it("never reaches a malformed hop left of the first untrusted one: a client's own junk is ignored", () => {
    const headers = request("10.0.0.2", [["x-forwarded-for", "garbage, 198.51.100.1, 10.1.2.3"]]);
    expect(resolve(headers, trusted)).toEqual({ address: "198.51.100.1", key: "198.51.100.1", source: "forwarded" });
  });
});

describe("resolveClientAddress: address forms and keys", () => {
  it("groups IPv6 clients by their /64 network", () => {
    const one = resolve(request("2001:DB8:1:2:aaaa::1"));
    const two = resolve(request("2001:db8:1:2:bbbb:cccc:dddd:eeee"));
    const other = resolve(request("2001:db8:1:3::1"));
    expect(one).toEqual({ address: "2001:db8:1:2:aaaa::1", key: "2001:db8:1:2::/64", source: "socket" });
    expect(two.key).toBe("2001:db8:1:2::/64");
    expect(other.key).toBe("2001:db8:1:3::/64");
  });

  it("groups by a configurable prefix such as /56", () => {
    expect(resolve(request("2001:db8:1:2ff::1"), "", 56)).toEqual({
      address: "2001:db8:1:2ff::1",
      key: "2001:db8:1:200::/56",
      source: "socket",
    });
  });

  it("masks prefixes that do not fall on a byte boundary", () => {
    expect(resolve(request("2001:db8:1:2ff::1"), "", 60).key).toBe("2001:db8:1:2f0::/60");
    const headers = request("172.31.255.1", [["x-forwarded-for", "198.51.100.1, 172.16.0.9"]]);
    expect(resolve(headers, "172.16.0.0/12")).toEqual({ address: "198.51.100.1", key: "198.51.100.1", source: "forwarded" });
    expect(resolve(request("172.32.0.1", [["x-forwarded-for", "198.51.100.1"]]), "172.16.0.0/12").address).toBe("172.32.0.1");
  });

  it("rejects an IPv6 prefix length outside 0-128", () => {
    expect(() => resolve(request("2001:db8::1"), "", 129)).toThrow(/ipv6PrefixLength/);
  });

  it("collapses IPv4-mapped IPv6 to IPv4 before comparing and keying", () => {
    expect(resolve(request("::ffff:203.0.113.9"))).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "socket" });
    const headers = request("::ffff:10.0.0.2", [["x-forwarded-for", "::ffff:198.51.100.1, ::FFFF:10.1.2.3"]]);
    expect(resolve(headers, "10.0.0.0/8")).toEqual({ address: "198.51.100.1", key: "198.51.100.1", source: "forwarded" });
  });

  it("accepts IPv4-mapped ranges in TRUSTED_PROXIES", () => {
    const headers = request("10.0.0.2", [["x-forwarded-for", "198.51.100.1"]]);
    expect(resolve(headers, "::ffff:10.0.0.0/104")).toEqual({ address: "198.51.100.1", key: "198.51.100.1", source: "forwarded" });
  });

  it("strips zone ids", () => {
    expect(resolve(request("fe80::1%eth0"))).toEqual({ address: "fe80::1", key: "fe80::/64", source: "socket" });
  });
});

describe("resolveClientAddress: no trustworthy peer", () => {
  it("returns the shared unknown bucket when the server did not announce a peer header", () => {
    const headers = request("203.0.113.9", [
      ["x-forwarded-for", "198.51.100.1"],
      ["x-real-ip", "198.51.100.2"],
    ]);
    const options = { trustedProxies: parseTrustedProxies("0.0.0.0/0"), ipv6PrefixLength: 64 };
    expect(resolveClientAddress(headers, options)).toEqual({ address: "unknown", key: "unknown", source: "unknown" });
    expect(resolveClientAddress(headers, { ...options, peerHeader: undefined })).toEqual({
      address: "unknown",
      key: "unknown",
      source: "unknown",
    });
    expect(resolveClientAddress(headers, { ...options, peerHeader: "" })).toEqual({
      address: "unknown",
      key: "unknown",
      source: "unknown",
    });
  });

  it("returns the shared unknown bucket when the announced header is missing or malformed", () => {
    expect(resolve(request(undefined))).toEqual({ address: "unknown", key: "unknown", source: "unknown" });
    expect(resolve(request(""))).toEqual({ address: "unknown", key: "unknown", source: "unknown" });
    expect(resolve(request("garbage"))).toEqual({ address: "unknown", key: "unknown", source: "unknown" });
  });
});

describe("peerHeaderFromServer", () => {
  afterEach(() => {
    delete (globalThis as Record<symbol, unknown>)[PEER_HEADER_SYMBOL];
  });

  it("is undefined under plain next start", () => {
    expect(peerHeaderFromServer()).toBeUndefined();
  });

  it("reads the header name announced by server.mjs", () => {
    (globalThis as Record<symbol, unknown>)[Symbol.for("gatehouse.peerHeader")] = "x-gatehouse-peer";
    expect(peerHeaderFromServer()).toBe("x-gatehouse-peer");
  });
});

describe("parseTrustedProxies", () => {
  it("treats undefined, empty and blank as no trusted proxies", () => {
    expect(parseTrustedProxies(undefined)).toEqual([]);
    expect(parseTrustedProxies("")).toEqual([]);
    expect(parseTrustedProxies(" , ")).toEqual([]);
  });

  it("parses IPv4 and IPv6 addresses and CIDR ranges", () => {
    const ranges = parseTrustedProxies("10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,::1");
    expect(ranges.map((range) => `${range.network.toString()}/${range.prefixLength}`)).toEqual([
      "10.0.0.0/8",
      "192.0.2.7/32",
      "2001:db8::/32",
      "::1/128",
    ]);
  });

  it.each([
    ["banana", /^TRUSTED_PROXIES: "banana" is not an IP address or CIDR range$/],
    ["3232235777", /^TRUSTED_PROXIES: "3232235777" is not an IP address/],
    ["10.0.0.0/33", /^TRUSTED_PROXIES: "10.0.0.0\/33" has a prefix length outside 0-32$/],
    ["2001:db8::/129", /^TRUSTED_PROXIES: "2001:db8::\/129" has a prefix length outside 0-128$/],
    ["10.0.0.0/x", /^TRUSTED_PROXIES: "10.0.0.0\/x" has a prefix length/],
    ["10.0.0.0/8/8", /^TRUSTED_PROXIES: "10.0.0.0\/8\/8" is not an IP address/],
    ["10.0.0.1/8", /^TRUSTED_PROXIES: "10.0.0.1\/8" has host bits set; did you mean 10.0.0.0\/8\?$/],
    ["172.17.0.0/12", /^TRUSTED_PROXIES: "172.17.0.0\/12" has host bits set; did you mean 172.16.0.0\/12\?$/],
    ["fe80::1%eth0", /^TRUSTED_PROXIES: "fe80::1%eth0" is not an IP address/],
  ])("rejects %s with an error naming TRUSTED_PROXIES", (entry, message) => {
    expect(() => parseTrustedProxies(`192.0.2.7, ${entry}`)).toThrow(message);
  });
});

describe("clientAddressResolver (resolveClientAddress, remembered)", () => {
  const options = { trustedProxies: parseTrustedProxies("10.0.0.0/8, 2001:db8:ffff::/48"), peerHeader: PEER };
  const cases: Headers[] = [
    request("203.0.113.9"),
    request("203.0.113.9", [["x-forwarded-for", "198.51.100.1"]]),
    request("10.0.0.2", [["x-forwarded-for", "198.51.100.1, 203.0.113.9"]]),
    request("10.0.0.2", [["x-forwarded-for", "198.51.100.1, 203.0.113.10"]]),
    request("10.0.0.2", [["x-forwarded-for", "not-an-address"]]),
    request("10.0.0.2"),
    request("2001:db8:1:2::7"),
    request("::ffff:203.0.113.9"),
    request(undefined),
    request("junk"),
  ];

  it("answers as resolveClientAddress does, the first time and every time after", () => {
    const resolveClient = clientAddressResolver(options);
    for (let round = 0; round < 2; round++)
      for (const headers of cases) expect(resolveClient(headers)).toEqual(resolveClientAddress(headers, options));
  });

  it("keeps a direct client's answer by its peer alone: new X-Forwarded-For values add no entry", () => {
    const resolveClient = clientAddressResolver(options, 2);
    const owner = resolveClient(request("198.51.100.7"));
    const other = resolveClient(request("198.51.100.8"));
    // A direct client forging a new chain each time: the same answer, and nobody else's evicted.
    for (let i = 0; i < 50; i++) {
      const forged = resolveClient(request("203.0.113.9", [["x-forwarded-for", `192.0.2.${i}`]]));
      expect(forged).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "socket" });
    }
    expect(resolveClient(request("203.0.113.9", [["x-forwarded-for", "192.0.2.200"]]))).toBe(
      resolveClient(request("203.0.113.9", [["x-forwarded-for", "192.0.2.201"]])),
    );
    expect(resolveClient(request("198.51.100.8"))).toBe(other);
    expect(resolveClient(request("198.51.100.7"))).not.toBe(owner);
  });

  it("keeps an answer by both headers it reads: another X-Forwarded-For is resolved anew", () => {
    const resolveClient = clientAddressResolver(options);
    const first = resolveClient(cases[2]!);
    expect(resolveClient(request("10.0.0.2", [["x-forwarded-for", "198.51.100.1, 203.0.113.9"]]))).toBe(first);
    expect(resolveClient(cases[3]!).key).toBe("203.0.113.10");
    expect(resolveClient(request("10.0.0.3", [["x-forwarded-for", "198.51.100.1, 203.0.113.9"]]))).not.toBe(first);
  });

  it("hands out frozen answers, so no caller can change what the next one is given", () => {
    const resolveClient = clientAddressResolver(options);
    const client = resolveClient(cases[0]!);
    expect(Object.isFrozen(client)).toBe(true);
    expect(() => {
      (client as { key: string }).key = "203.0.113.99";
    }).toThrow(TypeError);
    expect(resolveClient(cases[0]!).key).toBe("203.0.113.9");
  });

  it("resolves a long forwarded chain each time, without keeping it, and still right", () => {
    const resolveClient = clientAddressResolver(options, 2);
    const chain = [...Array.from({ length: 40 }, (_, i) => `198.51.100.${i}`), "203.0.113.9", "10.0.0.5"].join(", ");
    const headers = request("10.0.0.2", [["x-forwarded-for", chain]]);
    const first = resolveClient(headers);
    expect(first).toEqual({ address: "203.0.113.9", key: "203.0.113.9", source: "forwarded" });
    expect(resolveClient(headers)).not.toBe(first);
  });

  it("forgets the least recently used past its size, and answers those again correctly", () => {
    const resolveClient = clientAddressResolver(options, 2);
    const a = resolveClient(cases[0]!);
    resolveClient(cases[6]!);
    resolveClient(cases[2]!);
    const again = resolveClient(cases[0]!);
    expect(again).not.toBe(a);
    expect(again).toEqual(a);
  });
});
