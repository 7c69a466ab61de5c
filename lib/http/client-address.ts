import ipaddr from "ipaddr.js";
import { LRUCache } from "lru-cache";
import { PEER_HEADER_SYMBOL } from "@/lib/server-contract.mjs";

type IP = ipaddr.IPv4 | ipaddr.IPv6;

export interface TrustedRange {
  readonly network: IP;
  readonly prefixLength: number;
}

export type TrustedProxies = readonly TrustedRange[];

export interface ClientAddress {
  /** The client's address, normalised (IPv4 dotted quad, IPv6 RFC 5952), or "unknown". */
  address: string;
  /** The rate-limit key: IPv4 as is, IPv6 as its network (e.g. "2001:db8:1:2::/64"). */
  key: string;
  /** "malformed": a trusted proxy forwarded a hop that is no address; the key is MALFORMED_HOP_KEY, shared by all such. */
  source: "socket" | "forwarded" | "unknown" | "malformed";
  /** In the operator's TRUSTED_NETWORKS (the client's own offices): a larger allowance per address. */
  trustedNetwork?: true;
  /** The hop that could not be read (at most 64 characters), for the misconfiguration's log line. */
  malformedHop?: string;
}

export interface ResolveOptions {
  trustedProxies: TrustedProxies;
  /** TRUSTED_NETWORKS: client networks whose addresses are marked `trustedNetwork`. */
  trustedNetworks?: TrustedProxies;
  /** IPv6 addresses sharing this prefix share one key; default 64. */
  ipv6PrefixLength?: number;
  /** Name of the header carrying the TCP peer, as announced by server.mjs; absent under plain `next start`. */
  peerHeader?: string | undefined;
}

/** server.mjs stores the peer header's name here to say it overwrites that header on every request. */
export { PEER_HEADER_SYMBOL };

export const DEFAULT_IPV6_PREFIX_LENGTH = 64;

// Everyone without a trustworthy address shares this one key, so a missing or spoofable peer
// address makes the limiter stricter, never lets a client pick a fresh key per request.
const UNKNOWN: Readonly<ClientAddress> = Object.freeze({ address: "unknown", key: "unknown", source: "unknown" });

/** The header server.mjs announced, if any: read once, when the Gatehouse is built (lib/app.ts). */
export function peerHeaderFromServer(): string | undefined {
  const value = (globalThis as Record<symbol, unknown>)[PEER_HEADER_SYMBOL];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Strict parse without IPv4-mapped collapse; null when `raw` is not a plain address. */
function parseRawAddress(raw: string): IP | null {
  let text = raw.trim();
  // A zone id (fe80::1%eth0) names a local interface; it is not part of who the client is.
  if (text.includes(":")) text = text.split("%", 1)[0] ?? "";
  // Only four-part decimal IPv4: ipaddr.js would also read "3232235777" or "0x7f.1" as
  // addresses, giving one client many spellings of the same key.
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(":") && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return null;
}

function collapseMapped(ip: IP): IP {
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

/** Parses an address, collapsing ::ffff:a.b.c.d to IPv4 so both spellings compare and key alike. */
function parseAddress(raw: string): IP | null {
  const ip = parseRawAddress(raw);
  return ip === null ? null : collapseMapped(ip);
}

// What some proxies write for a hop (Azure Application Gateway: "203.0.113.7:40001"; RFC 7239
// style: "[2001:db8::1]:443" or "[2001:db8::1]"). The port says nothing about who the client is.
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::(\d{1,5}))?$/;

function isPort(text: string | undefined): boolean {
  return text === undefined || Number(text) <= 65535;
}

/** An X-Forwarded-For hop: a plain address, or one written with its port or in brackets. */
function parseHop(raw: string): IP | null {
  const text = raw.trim();
  const v4 = IPV4_WITH_PORT.exec(text);
  if (v4) return isPort(v4[2]) ? parseAddress(v4[1]!) : null;
  const v6 = BRACKETED_IPV6.exec(text);
  if (v6) return isPort(v6[2]) && v6[1]!.includes(":") ? parseAddress(v6[1]!) : null;
  return parseAddress(text);
}

/**
 * A trusted proxy wrote a hop that is no address: a misconfiguration. Keying the request on the
 * proxy (the last address that can be vouched for) would put every well-formed client behind it
 * in the malformed ones' bucket; a key per request (until issue 59) let them past every
 * per-address limit. So every malformed hop shares one bucket of its own, which fails closed:
 * the per-address limits hold for them together (the sign-in limits count failures only, so
 * owners behind a broken proxy are refused only once someone there fails), and the caller logs
 * and counts each.
 */
export const MALFORMED_HOP_KEY = "malformed-hop";

function malformed(hop: string): ClientAddress {
  return { address: "unknown", key: MALFORMED_HOP_KEY, source: "malformed", malformedHop: hop.trim().slice(0, 64) };
}

function networkOf(ip: IP, prefixLength: number): IP {
  const bytes = ip.toByteArray().map((byte, index) => {
    const bitsLeft = prefixLength - index * 8;
    if (bitsLeft >= 8) return byte;
    if (bitsLeft <= 0) return 0;
    return byte & (0xff << (8 - bitsLeft));
  });
  return ipaddr.fromByteArray(bytes);
}

function format(ip: IP): string {
  return ip.kind() === "ipv6" ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString();
}

function parseTrustedEntry(entry: string, variable: string): TrustedRange {
  const fail = (why: string) => new Error(`${variable}: ${JSON.stringify(entry)} ${why}`);
  const [addressPart = "", prefixPart, ...rest] = entry.split("/");
  if (rest.length > 0) throw fail("is not an IP address or CIDR range");
  const raw = parseRawAddress(addressPart);
  if (raw === null || addressPart.includes("%")) throw fail("is not an IP address or CIDR range");
  const bits = raw.kind() === "ipv4" ? 32 : 128;
  let prefixLength = bits;
  if (prefixPart !== undefined) {
    if (!/^\d{1,3}$/.test(prefixPart) || Number(prefixPart) > bits) throw fail(`has a prefix length outside 0-${bits}`);
    prefixLength = Number(prefixPart);
  }
  // A typo such as 10.0.0.1/8 for 10.0.0.1/32 would silently trust 16 million addresses.
  const network = networkOf(raw, prefixLength);
  if (network.toNormalizedString() !== raw.toNormalizedString()) {
    throw fail(`has host bits set; did you mean ${format(network)}/${prefixLength}?`);
  }
  // Addresses are compared after the IPv4-mapped collapse, so mapped ranges must collapse too.
  if (raw.kind() === "ipv6" && prefixLength >= 96 && (raw as ipaddr.IPv6).isIPv4MappedAddress()) {
    return { network: (raw as ipaddr.IPv6).toIPv4Address(), prefixLength: prefixLength - 96 };
  }
  return { network, prefixLength };
}

/**
 * Parses TRUSTED_PROXIES (or, named by `variable`, TRUSTED_NETWORKS): comma-separated IPv4/IPv6
 * addresses or CIDR ranges; empty means none. Throws with a message naming the variable.
 */
export function parseTrustedProxies(value: string | undefined, variable = "TRUSTED_PROXIES"): TrustedProxies {
  if (value === undefined) return [];
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => parseTrustedEntry(entry, variable));
}

function isTrusted(ip: IP, trustedProxies: TrustedProxies): boolean {
  return trustedProxies.some((range) => range.network.kind() === ip.kind() && ip.match(range.network, range.prefixLength));
}

function toResult(ip: IP, source: "socket" | "forwarded", options: ResolveOptions, ipv6PrefixLength: number): ClientAddress {
  const address = format(ip);
  const key = ip.kind() === "ipv4" ? address : `${format(networkOf(ip, ipv6PrefixLength))}/${ipv6PrefixLength}`;
  return options.trustedNetworks && isTrusted(ip, options.trustedNetworks)
    ? { address, key, source, trustedNetwork: true }
    : { address, key, source };
}

/**
 * The client address behind a request. The TCP peer (from the header server.mjs overwrites) is the
 * client unless it is a trusted proxy; then X-Forwarded-For is read right to left past trusted hops.
 * X-Real-IP is never read: it carries one address with no chain to check against.
 */
export function resolveClientAddress(headers: { get(name: string): string | null }, options: ResolveOptions): ClientAddress {
  return resolved(headers, options).client;
}

/** The client, and whether X-Forwarded-For was read for it (the peer is a trusted proxy): one parse of the peer for both. */
function resolved(
  headers: { get(name: string): string | null },
  options: ResolveOptions,
): { client: ClientAddress; readsForwardedFor: boolean } {
  const ipv6PrefixLength = options.ipv6PrefixLength ?? DEFAULT_IPV6_PREFIX_LENGTH;
  if (!Number.isInteger(ipv6PrefixLength) || ipv6PrefixLength < 0 || ipv6PrefixLength > 128) {
    throw new RangeError(`ipv6PrefixLength: expected an integer from 0 to 128, got ${ipv6PrefixLength}`);
  }
  // Without the server's announcement the header could have been written by the client.
  if (!options.peerHeader) return { client: { ...UNKNOWN }, readsForwardedFor: false };
  const peer = parseAddress(headers.get(options.peerHeader) ?? "");
  if (peer === null) return { client: { ...UNKNOWN }, readsForwardedFor: false };
  if (!isTrusted(peer, options.trustedProxies))
    return { client: toResult(peer, "socket", options, ipv6PrefixLength), readsForwardedFor: false };
  return { client: forwardedClient(peer, headers.get("x-forwarded-for"), options, ipv6PrefixLength), readsForwardedFor: true };
}

/** The client behind a trusted proxy `peer`: X-Forwarded-For read right to left past trusted hops. */
function forwardedClient(peer: IP, forwarded: string | null, options: ResolveOptions, ipv6PrefixLength: number): ClientAddress {
  // Headers.get joins repeated X-Forwarded-For headers with ", " in arrival order.
  if (forwarded === null || forwarded.trim() === "") return toResult(peer, "socket", options, ipv6PrefixLength);

  let client = peer;
  let source: "socket" | "forwarded" = "socket";
  const hops = forwarded.split(",");
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = parseHop(hops[index] ?? "");
    // Written by a trusted proxy (every hop to its right was one), so the proxy is misconfigured.
    if (hop === null) return malformed(hops[index] ?? "");
    client = hop;
    source = "forwarded";
    if (!isTrusted(hop, options.trustedProxies)) break;
  }
  return toResult(client, source, options, ipv6PrefixLength);
}

/** A memo key longer than this (a long X-Forwarded-For chain) is resolved each time, not kept. */
const MEMO_KEY_MAX_CHARS = 256;

/**
 * `resolveClientAddress` with `options` fixed, remembering its last `maxEntries` answers, frozen so
 * no caller can change another's. The parse took about 15 µs of a repeated refusal's 60 µs of
 * fast-path work (ipaddr.js's regular expressions), and a request is resolved more than once (door,
 * fast path, route). A peer that is no trusted proxy is the client whatever X-Forwarded-For says, so
 * its answer is kept by the peer alone: a client sending a new X-Forwarded-For each time adds no
 * entry (the attacker review of 7ca7515). A trusted proxy's are kept by the peer and the chain.
 */
export function clientAddressResolver(
  options: ResolveOptions,
  maxEntries = 4096,
): (headers: { get(name: string): string | null }) => ClientAddress {
  const known = new LRUCache<string, Readonly<ClientAddress>>({ max: maxEntries });
  return (headers) => {
    const peer = options.peerHeader ? (headers.get(options.peerHeader) ?? "") : "";
    const direct = known.get(peer);
    if (direct !== undefined) return direct;
    // Header values hold no line feed (Node refuses them): a chain's key never equals a peer's.
    const chainKey = `${peer}\n${headers.get("x-forwarded-for") ?? ""}`;
    const chained = known.get(chainKey);
    if (chained !== undefined) return chained;
    const { client, readsForwardedFor } = resolved(headers, options);
    const frozen = Object.freeze(client);
    const memoKey = readsForwardedFor ? chainKey : peer;
    if (memoKey.length <= MEMO_KEY_MAX_CHARS) known.set(memoKey, frozen);
    return frozen;
  };
}

/**
 * What a socket's own connections count under (server.mjs's connection share): the limiter's key
 * for that peer (an IPv6 client's /64) and whether it is in TRUSTED_NETWORKS; a trusted proxy's
 * key is null, as its connections carry many clients and are bounded only by the server's cap.
 */
export function connectionKey(
  socketAddress: string,
  options: Pick<ResolveOptions, "trustedProxies" | "trustedNetworks" | "ipv6PrefixLength">,
): { key: string | null; trustedNetwork: boolean } {
  const peer = parseAddress(socketAddress);
  if (peer === null) return { key: socketAddress, trustedNetwork: false };
  if (isTrusted(peer, options.trustedProxies)) return { key: null, trustedNetwork: false };
  const client = toResult(peer, "socket", options, options.ipv6PrefixLength ?? DEFAULT_IPV6_PREFIX_LENGTH);
  return { key: client.key, trustedNetwork: client.trustedNetwork === true };
}
