import { gzipSync } from "node:zlib";
import { LRUCache } from "lru-cache";
import Negotiator from "negotiator";
import type { LimitResult } from "@/lib/rate-limit/limiter";
import type { ClientAddress } from "./client-address";
import { REFUSE, retryAfterSeconds } from "./refusals";
import type { RefusalStyle, RoutePath } from "./route-policies";
import { apiSecurityHeaders } from "./security-headers";

/** What server.mjs needs to answer a request without entering Next.js. */
export type FastAnswer = { status: number; headers: Record<string, string | string[]>; body: string | Buffer };

// What Next.js adds to a route handler's response on its way out: its cache-key Vary and gzip
// when the client takes it. The fast path adds the same, so a client cannot tell the two apart
// (e2e/refusal-fast-path.spec.ts compares them over HTTP and fails when Next.js changes).
const NEXT_VARY = "rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch, Accept-Encoding";

/** The one thing the fast path reads from a request's headers (server.mjs passes Node's raw headers). */
export type HeaderReader = { get(name: string): string | null };

export type FastPath = {
  /**
   * The remembered refusal for this request, or null to let it through to Next.js: a promise only
   * when its answer must be rendered first (once a second), so a flood's refusal costs no promise.
   */
  answer(method: string, url: string, headers: HeaderReader): FastAnswer | null | Promise<FastAnswer | null>;
};

/**
 * A route whose first limit is keyed by the client address alone. `deviceLane`: a known device
 * passes that limit in a lane of its own, so a request with a signed device cookie is never
 * answered here for its address.
 */
export type FastRoute = { method: string; path: RoutePath; style: RefusalStyle; deviceLane?: boolean };

/**
 * A route whose CSRF refusals past `crossSiteRefusals` are remembered (lib/auth/limited.ts), and
 * `refusedSender`: whether a request is one its same-origin step refuses (from the headers, as
 * the route decides it). Only such requests are answered here: the address's own pages never are.
 */
export type SenderRoute = { method: string; path: RoutePath; style: RefusalStyle; refusedSender: (headers: HeaderReader) => boolean };

// A refusal's bytes change only when its Retry-After second does: each entry keeps the answer it
// last rendered (and its gzip, made when first asked for), so a flood pays for a lookup, not a render.
type Rendered = { seconds: number; locale: string; plain: FastAnswer; gzip?: FastAnswer };
type Entry = { retryAtMs: number; result: LimitResult; style: RefusalStyle; rendered?: Rendered };

// Keys are a route path and an address key; the value holds a number and a shared policy object.
const ENTRY_BYTES = 200;

/** Where the app publishes its fast path for server.mjs, which cannot import app code. */
export { FAST_PATH_SYMBOL } from "@/lib/server-contract.mjs";

/**
 * Refusals already decided, remembered so the next request from the same address to the same
 * route is answered in front of Next.js, at a fraction of the cost: one client's flood must not
 * take the server's CPU from everybody else. Only refusals are kept (never allowances), only for
 * a route's first limit when it is keyed by the address alone (decided before the body), and
 * only until the retry time; after it the request goes through the limiter again, which stays
 * the only authority. With a shared store each instance keeps its own cache: it can only refuse
 * what the store refused.
 */
export class FastPathCache implements FastPath {
  private readonly entries: LRUCache<string, Entry>;
  private readonly routes: ReadonlyMap<string, FastRoute>;
  private readonly styles: ReadonlyMap<RoutePath, RefusalStyle>;
  private readonly senderRoutes: ReadonlyMap<string, SenderRoute>;

  constructor(
    routes: readonly FastRoute[],
    private readonly clientAddress: (headers: HeaderReader) => ClientAddress,
    private readonly clock: () => number,
    maxEntries: number,
    private readonly production: boolean,
    /** Told of each early answer (a debug log line: free unless LOG_LEVEL=debug). */
    private readonly onAnswer: (path: RoutePath) => void = () => {},
    /** The request's language, and the refusal said in it as the route's wrapper says it (lib/auth/limited.ts). */
    private readonly language: {
      of(headers: HeaderReader): string;
      say(response: Response, locale: string): Response;
    } = { of: () => "", say: (response) => response },
    /** Whether the request carries a device cookie whose signature holds (an HMAC, no read). */
    private readonly signedDevice: (headers: HeaderReader) => boolean = () => false,
    senderRoutes: readonly SenderRoute[] = [],
  ) {
    this.routes = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
    this.styles = new Map(routes.map((route) => [route.path, route.style]));
    this.senderRoutes = new Map(senderRoutes.map((route) => [`${route.method} ${route.path}`, route]));
    // Bounded in entries and bytes; each entry forgets itself at its retry time.
    this.entries = new LRUCache<string, Entry>({
      max: maxEntries,
      maxSize: maxEntries * ENTRY_BYTES,
      sizeCalculation: (_entry, key) => ENTRY_BYTES + key.length,
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /** Called when a route's first limit refused this client. */
  remember(path: RoutePath, client: ClientAddress, result: LimitResult) {
    const style = this.styles.get(path);
    if (style) this.keep(key(path, client), client, result, style);
  }

  /** Called when this client's CSRF refusals are spent (`crossSiteRefusals`) at `path`. */
  rememberRefusedSender(method: string, path: RoutePath, client: ClientAddress, result: LimitResult) {
    const route = this.senderRoutes.get(`${method} ${path}`);
    if (route) this.keep(senderKey(path, client), client, result, route.style);
  }

  private keep(entryKey: string, client: ClientAddress, result: LimitResult, style: RefusalStyle) {
    const ttl = Math.ceil(result.retryAfterMs);
    // An outage's refusal is the fail mode's, not the limiter's: let each request ask again.
    // Malformed hops share one key that names no client: the limiter answers them, each one logged and counted.
    if (ttl <= 0 || result.storeFailed || client.source === "unknown" || client.source === "malformed") return;
    this.entries.set(entryKey, { retryAtMs: this.clock() + ttl, result, style }, { ttl });
  }

  answer(method: string, url: string, headers: HeaderReader): FastAnswer | null | Promise<FastAnswer | null> {
    if (this.entries.size === 0) return null;
    const found = this.lookUp(`${method} ${url.split("?", 1)[0]}`, headers);
    if (!found) return null;
    const { path, entry } = found;
    const nowMs = this.clock();
    if (!entry || entry.retryAtMs <= nowMs) return null;
    const remainingMs = entry.retryAtMs - nowMs;
    const seconds = retryAfterSeconds(remainingMs);
    const locale = this.language.of(headers);
    if (entry.rendered?.seconds === seconds && entry.rendered.locale === locale) return this.sent(entry.rendered, path, headers);
    const refusal = this.language.say(REFUSE[entry.style]({ ...entry.result, retryAfterMs: remainingMs }), locale);
    return this.render(refusal).then((plain) => this.sent((entry.rendered = { seconds, locale, plain }), path, headers));
  }

  /** A rendered refusal as this request takes it (gzip or not), counted as answered early. */
  private sent(rendered: Rendered, path: RoutePath, headers: HeaderReader): FastAnswer {
    this.onAnswer(path);
    if (!takesGzip(headers.get("accept-encoding"))) return rendered.plain;
    rendered.gzip ??= gzipped(rendered.plain);
    return rendered.gzip;
  }

  /**
   * The refusal remembered for this request: its CSRF refusals' where the route's same-origin step
   * refuses it (never the address's budget, which such a request does not reach), else its
   * address's where the route's first limit is the address's (never a known device's, which goes
   * on to its own lane).
   */
  private lookUp(at: string, headers: HeaderReader): { path: RoutePath; entry: Entry | undefined } | null {
    const senderRoute = this.senderRoutes.get(at);
    const route = this.routes.get(at);
    let entryKey: (path: RoutePath, client: ClientAddress) => string;
    let path: RoutePath;
    if (senderRoute?.refusedSender(headers)) [entryKey, path] = [senderKey, senderRoute.path];
    else if (route && !(route.deviceLane && this.signedDevice(headers))) [entryKey, path] = [key, route.path];
    else return null;
    const client = this.clientAddress(headers);
    if (client.source === "unknown" || client.source === "malformed") return null;
    return { path, entry: this.entries.get(entryKey(path, client)) };
  }

  /** A refusal decided in front of Next.js (the door's 503), said in the request's language. */
  async refusal(response: Response, headers: HeaderReader): Promise<FastAnswer> {
    return this.render(this.language.say(response, this.language.of(headers)));
  }

  /** The very refusal the route would send now, with the same headers and body. */
  private render(response: Response): Promise<FastAnswer> {
    return nextLikeAnswer(response, this.production);
  }
}

/**
 * A route handler's response as Next.js sends it for an API route: the security headers of
 * next.config.ts, its Vary, and gzip when `acceptEncoding` takes it (null: never). Each
 * Set-Cookie stays a header of its own.
 */
export async function nextLikeAnswer(
  response: Response,
  production: boolean,
  acceptEncoding: string | string[] | null | undefined = null,
): Promise<FastAnswer> {
  const answer: FastAnswer = {
    status: response.status,
    headers: { ...apiSecurityHeaders(production), Vary: NEXT_VARY },
    body: await response.text(),
  };
  // As Next.js's sendResponse merges them: a header routing set (next.config's) stays, the route's
  // Vary and challenges are added beside it, and the route's framing headers are dropped.
  response.headers.forEach((value, name) => {
    if (name === "set-cookie" || FRAMING.has(name)) return;
    const existing = Object.keys(answer.headers).find((known) => known.toLowerCase() === name);
    if (existing === undefined) answer.headers[name] = value;
    else if (ADDED.has(name)) answer.headers[existing] = [answer.headers[existing]!, value].flat();
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) answer.headers["set-cookie"] = cookies;
  return takesGzip(acceptEncoding) ? gzipped(answer) : answer;
}

/** Headers Next.js appends to what routing set, rather than leaving the route's out. */
const ADDED = new Set(["vary", "www-authenticate", "proxy-authenticate"]);
/** A route's framing, which Next.js drops: Node frames the answer it sends. */
const FRAMING = new Set(["content-length", "content-encoding", "transfer-encoding"]);

/**
 * Whether the client takes gzip (RFC 9110 12.5.3), read by negotiator as Next.js's compression reads
 * it (and as lib/i18n reads Accept-Language): `gzip;q=0` gets the plain body.
 */
function takesGzip(acceptEncoding: string | string[] | null | undefined): boolean {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(",") : (acceptEncoding ?? undefined);
  // Browsers send a few dozen bytes. negotiator's parse grows with the header (a 16 KB one took
  // 2.5 ms, a remembered refusal 4 µs): a longer one gets the plain body, as lib/i18n does.
  if (header !== undefined && header.length > ACCEPT_ENCODING_MAX_CHARS) return false;
  // A client sends one Accept-Encoding, so a flood's is the same each time: its answer is kept.
  const memoKey = header ?? NO_HEADER;
  const known = gzipTaken.get(memoKey);
  if (known !== undefined) return known;
  const takes = new Negotiator({ headers: { "accept-encoding": header } }).encoding(["gzip"]) === "gzip";
  gzipTaken.set(memoKey, takes);
  return takes;
}

const ACCEPT_ENCODING_MAX_CHARS = 512;
/** Accept-Encoding values already read: the 64 used last, so a client sending new ones evicts only the oldest. */
const gzipTaken = new LRUCache<string, boolean>({ max: 64 });
/** The key of a request without Accept-Encoding: no header value holds a NUL (Node refuses it). */
const NO_HEADER = "\u0000";

// nextLikeAnswer is the only source of an answer: it dropped the route's framing headers, and
// next.config's set has none, so there is no Content-Length or Content-Encoding to replace.
function gzipped(answer: FastAnswer): FastAnswer {
  return { ...answer, headers: { ...answer.headers, "Content-Encoding": "gzip" }, body: gzipSync(answer.body) };
}

function key(path: RoutePath, client: ClientAddress): string {
  return `${path} ${client.key}`;
}

/** A separate entry: the address's CSRF refusals never answer its own pages' requests. */
function senderKey(path: RoutePath, client: ClientAddress): string {
  return `${path} ${client.key} sender`;
}
