import { localeCookie } from "@/lib/i18n/locales";
import { NextRequest } from "next/server";
import { gatehouse, type Gatehouse } from "@/lib/app";
import { logSecurity } from "@/lib/auth/security-log";
import type { ClientAddress } from "@/lib/http/client-address";
import { outageCause } from "@/lib/rate-limit/outage";
import { csrfRefused, limitStoreUnavailable, noClientAddress, REFUSE, serviceUnavailable } from "@/lib/http/refusals";
import { jsonRequired } from "@/lib/http/body";
import { sender } from "@/lib/http/csrf";
import { jsonError, localized } from "@/lib/http/responses";
import { sentence } from "@/lib/i18n/sentence";
import type { PolicyName } from "@/lib/rate-limit/policies";
import {
  ruleAt,
  type DeviceLane,
  type RouteRule,
  type LimitKey,
  type RefusalStyle,
  type RouteLimit,
  type RoutePath,
} from "@/lib/http/route-policies";
import { deviceTokenOf } from "@/lib/http/cookies";
import { messageOf } from "@/lib/log/message";
import { inSpan } from "@/lib/tracing/spans";

/**
 * One request's walk through its route's limits. Rows apply strictly in table order: the wrapper
 * applies the leading rows that need only the address, and the handler applies the rest as soon as
 * it knows their key (`limit("addressAndUsername", email)`, `limit("user", id)`).
 *
 * Two things keep a crowd of owners from being taken for the attacker (design invariant 11):
 * - a budget that counts failures only is given back by a success (`succeeded`), and by the
 *   per-username limit's refusal, which counted the request on its own key;
 * - a request with a server-signed device cookie passes the rows strangers share in the route's
 *   device lane, counted per device. Where the lane needs the account ("account" proof), those
 *   address rows wait for the body: its username's signature waives them, anything else pays
 *   them then, and a request that ends before (a malformed body) pays them on its way out.
 */
export class RouteLimits {
  private next = 0;
  /** Rows counted and allowed: what a success may give back. */
  private readonly counted: Counted[] = [];
  /** Address rows a device cookie put off until the account is known. */
  private deferred: RouteLimit[] = [];
  /** Rows the device lane passed, with their keys (a device later found gone pays them after all). */
  private waived: { row: RouteLimit; key: LimitKey; value: string }[] = [];
  private given = false;
  /** An `overflow` row was spent and its overflow allowed the request: answer it mailbox first. */
  private overflowed = false;

  constructor(
    readonly gate: Gatehouse,
    readonly client: ClientAddress,
    readonly path: RoutePath,
    private readonly rows: readonly RouteLimit[],
    private readonly style: RefusalStyle,
    /** The request's User-Agent, for the labels the account page shows (never trusted for anything else). */
    readonly userAgent: string | null = null,
    /** The request's language (its cookie, else Accept-Language, else the default). */
    readonly locale: string | null = null,
    /** The route's device lane, and the id of the device cookie whose signature holds (no account checked yet). */
    private readonly lane: { policy: DeviceLane; deviceId: string } | null = null,
  ) {}

  /**
   * Applies the next rows keyed by `key`; a refusal to send, or null to go on. `accountDevice` is
   * the id of the request's device cookie when it verified for the account `value` names.
   */
  limit(key: LimitKey, value = "", accountDevice: string | null = null): Promise<Response | null> {
    return inSpan(
      "limit",
      () => this.limitUntraced(key, value, accountDevice),
      (refused) => (refused ? "refused" : "allowed"),
    );
  }

  private async limitUntraced(key: LimitKey, value: string, accountDevice: string | null): Promise<Response | null> {
    if (this.rows[this.next]?.key !== key) throw new Error(`${this.path}: no ${key} limit is next in ROUTE_RULES`);
    const owner = this.lane !== null && accountDevice === this.lane.deviceId;
    if (key === "addressAndUsername" && this.deferred.length > 0) {
      const waiting = this.deferred;
      this.deferred = [];
      if (owner) this.waived.push(...waiting.map(waivedAddressRow));
      else
        for (const row of waiting) {
          const refused = await this.apply(row, "address", "");
          if (refused) return refused;
        }
    }
    while (this.rows[this.next]?.key === key) {
      const row = this.rows[this.next++]!;
      if (owner && row.strangers) {
        this.waived.push({ row, key, value });
        continue;
      }
      const refused = await this.apply(row, key, value);
      if (refused) return refused;
    }
    return null;
  }

  /**
   * The handler says the next rows of `key` are not for this request's kind (with its reason where
   * it calls this), so that a success without them is no skipped limit.
   */
  notApplied(key: LimitKey): void {
    while (this.rows[this.next]?.key === key) this.next++;
  }

  /** The rows not applied yet (a handler that answered 2xx with one left skipped a limit). */
  get pending(): readonly RouteLimit[] {
    return [...this.deferred, ...this.rows.slice(this.next)];
  }

  /** Applies the leading rows that need nothing but the client address (or the device lane in their place). */
  async leading(): Promise<Response | null> {
    for (;;) {
      const row = this.rows[this.next];
      const key = row?.key;
      if (key !== "address" && key !== "addressAndRoute") break;
      if (this.lane && row?.strangers) {
        this.next++;
        this.deferred.push(row);
        continue;
      }
      const refused = await this.limit(key);
      if (refused) return refused;
    }
    if (!this.lane || this.deferred.length === 0) return null;
    const refused = await this.apply({ policy: this.lane.policy.policy, key: "address" }, "device", this.lane.deviceId);
    if (refused) return refused;
    // The signature is the whole proof where the route names no account.
    if (this.lane.policy.proof === "cookie") this.waived.push(...this.deferred.splice(0).map(waivedAddressRow));
    return null;
  }

  /**
   * The device the lane let past the address rows is not the account's after all (revoked or
   * replaced since it was signed): it pays them now.
   */
  async deviceGone(): Promise<Response | null> {
    const waived = this.waived;
    this.waived = [];
    for (const { row, key, value } of waived) {
      const refused = await this.apply(row, key, value);
      if (refused) return refused;
    }
    return null;
  }

  /**
   * The CSRF rule refused this request (`senderRefused`, before any row): counted on the
   * address's own `crossSiteRefusals`, never on the budgets its pages share. Past it the refusal
   * is a 429, which the fast path then answers for such requests only. Null: refuse it as the
   * rule says. An unknown address (a route with no address rows, behind plain `next start`) has no
   * key to count on: its refusal is the rule's alone.
   */
  async refusedSender(method: string): Promise<Response | null> {
    if (this.client.source === "unknown") return null;
    const policy: PolicyName = "crossSiteRefusals";
    const result = await this.gate.limiter.consume(policy, this.keyParts("address", ""), { trustedNetwork: this.trusted("address") });
    this.gate.metrics.limitDecisions.inc({ policy, result: result.allowed ? "allowed" : "refused" });
    // Fails open: a store outage leaves the rule's own refusal, which is no less a refusal.
    if (result.allowed || result.storeFailed) return null;
    logSecurity(this.gate, { route: this.path, outcome: "rate_limited", client: this.client, policy });
    this.gate.fastPath.rememberRefusedSender(method, this.path, this.client, result);
    return REFUSE[this.style](result);
  }

  /** A request that ended before its account was known (a malformed body, say) pays the rows it put off. */
  async settle(): Promise<void> {
    const waiting = this.deferred;
    this.deferred = [];
    for (const row of waiting) await this.apply(row, "address", "");
  }

  /**
   * Whether this request is answered mailbox first: the address's password checks for new devices
   * are spent, and its mailbox-first budget let it through (docs/owner-lane.md).
   */
  get mailboxFirst(): boolean {
    return this.overflowed;
  }

  /**
   * The request was answered mailbox first: no password was checked, so no failure happened. The
   * address's failure budgets get it back (the mailbox-first budget counted it instead), so a guest
   * spraying from an office cannot spend the office's budget this way.
   */
  async answeredMailboxFirst(): Promise<void> {
    const returning = this.counted.filter(({ row, key }) => key === "address" && this.countsFailuresOnly(row));
    for (const entry of returning) this.counted.splice(this.counted.indexOf(entry), 1);
    await Promise.all(returning.map((entry) => this.refund(entry)));
  }

  /** The mailbox was proved (a right mailed code): this address's mailbox-first budget gets its sign-in back. */
  async mailboxProved(): Promise<void> {
    const trustedNetwork = this.trusted("address");
    await this.gate.limiter.consume("mailboxFirst", this.keyParts("address", ""), { cost: -1, trustedNetwork }).catch(() => {});
  }

  /**
   * The request ended in a success of `account` (its user id): the budgets that count failures
   * only get it back, once, while the account's own refunds last (`successRefunds`): one account's
   * right password sent in a loop is not free, an office of different people is.
   */
  async succeeded(account: string): Promise<void> {
    if (this.given) return;
    this.given = true;
    await this.giveBack(({ row }) => this.countsFailuresOnly(row), "successRefunds", ["account", account]);
  }

  /**
   * Gives back the counted rows `which` picks, if `allowance` (a policy keyed by `allowanceKey`)
   * has one left. A refund that fails leaves the request counted: the stricter reading, never an
   * error to the owner.
   */
  private async giveBack(which: (entry: Counted) => boolean, allowance: PolicyName, allowanceKey: string[]): Promise<void> {
    const returning = this.counted.filter(which);
    if (returning.length === 0) return;
    const allowed = await this.gate.limiter.consume(allowance, allowanceKey).catch(() => null);
    if (!allowed?.allowed) return;
    for (const entry of returning) this.counted.splice(this.counted.indexOf(entry), 1);
    await Promise.all(returning.map((entry) => this.refund(entry)));
  }

  /** One counted row given back exactly where it was counted; a refund that fails leaves it counted. */
  private async refund({ row, parts, trustedNetwork }: Counted): Promise<void> {
    await this.gate.limiter.consume(row.policy, parts, { cost: -1, trustedNetwork }).catch(() => {});
  }

  /** Whether `row` is the budget another row of this route overflows into (mailbox first). */
  private isOverflow(row: RouteLimit): boolean {
    return this.rows.some((other) => other.overflow === row.policy);
  }

  private countsFailuresOnly(row: RouteLimit): boolean {
    return this.gate.config.rateLimit.policies[row.policy].countsFailuresOnly === true;
  }

  private async apply(row: RouteLimit, key: LimitKey | "device", value: string): Promise<Response | null> {
    const parts = this.keyParts(key, value);
    const trustedNetwork = this.trusted(key);
    const result = await this.gate.limiter.consume(row.policy, parts, { trustedNetwork });
    this.gate.metrics.limitDecisions.inc({ policy: row.policy, result: result.allowed ? "allowed" : "refused" });
    // A fail-closed limit whose store is down refused nobody in particular: 503, not "too many
    // attempts", and nothing for the fast path to remember (the breaker already logged the outage).
    if (!result.allowed && result.storeFailed) {
      this.gate.metrics.unavailable.inc({ route: this.path, cause: "rate_limit_store" });
      return limitStoreUnavailable(result);
    }
    if (result.allowed) {
      this.counted.push({ row, key, parts, trustedNetwork });
      return null;
    }
    // Spent, but not a refusal: the request goes on mailbox first, within the overflow's budget.
    if (row.overflow) return this.overflow(row.overflow, key, value);
    logSecurity(this.gate, {
      route: this.path,
      outcome: "rate_limited",
      client: this.client,
      policy: row.policy,
      ...(key === "addressAndUsername" ? { email: value } : key === "user" ? { userId: value } : {}),
    });
    // The per-username limit counted this request on its own key: the address's budget, which a
    // crowd shares, gets it back, so one guest guessing one account cannot spend everybody's. Up
    // to `refusalRefunds` a quarter hour: past it they spend the address, whose refusal the fast
    // path then answers, so a flood of them stays cheap.
    // So does the mailbox-first budget it spent on the way: it was answered no code.
    if (key === "addressAndUsername")
      await this.giveBack(
        (entry) => entry.key === "address" && (this.countsFailuresOnly(entry.row) || this.isOverflow(entry.row)),
        "refusalRefunds",
        ["refusal", this.client.key],
      );
    // A limit by address alone: the fast path in server.mjs answers the next ones (never a known
    // device's, which it lets through to its lane).
    if (key === "address") this.gate.fastPath.remember(this.path, this.client, result);
    return REFUSE[this.style](result);
  }

  private async overflow(policy: PolicyName, key: LimitKey | "device", value: string): Promise<Response | null> {
    const refused = await this.apply({ policy, key: key === "device" ? "address" : key }, key, value);
    if (!refused) this.overflowed = true;
    return refused;
  }

  /** Only the address's own limits take the larger allowance of TRUSTED_NETWORKS, never a username's. */
  private trusted(key: LimitKey | "device"): boolean {
    return this.client.trustedNetwork === true && (key === "address" || key === "addressAndRoute");
  }

  private keyParts(key: LimitKey | "device", value: string): string[] {
    switch (key) {
      case "address":
        return [this.client.key];
      // The key names the route, not the request URL, so `/token/` or `/TOKEN` cannot get a fresh counter.
      case "addressAndRoute":
        return [this.client.key, this.path];
      case "addressAndUsername":
        return [this.client.key, value];
      case "user":
        return [value];
      case "session":
        return ["session", value];
      case "email":
        return ["email", value];
      case "device":
        return ["device", value];
    }
  }
}

/** An address row the device lane passed, as `deviceGone` would apply it after all. */
const waivedAddressRow = (row: RouteLimit) => ({ row, key: "address" as const, value: "" });

/** A row counted and allowed, as it was counted: what a refund gives back exactly there. */
type Counted = { row: RouteLimit; key: LimitKey | "device"; parts: string[]; trustedNetwork: boolean };

type Handler<C> = (request: NextRequest, limits: RouteLimits, context: C) => Promise<Response>;

/**
 * Next.js hands a route its NextRequest, but from its runtime's own copy of the class, so
 * `instanceof` against the copy bundled with this route fails and each request was copied into a
 * second NextRequest: its headers, URL and body stream, on every request (bench/RESULTS.md part
 * 15). One with NextRequest's members is taken as it is; a plain Request (a test, a caller
 * outside Next.js) is wrapped.
 */
function asNextRequest(incoming: Request): NextRequest {
  if (incoming instanceof NextRequest) return incoming;
  if ("nextUrl" in incoming && "cookies" in incoming) return incoming as NextRequest;
  return new NextRequest(incoming);
}

/**
 * A route handler behind its row of ROUTE_RULES: the client address, the CSRF rule's same-origin
 * step (from the headers, before the body is read), the leading limits, then the handler. A
 * route with address limits and no trustworthy client address (plain
 * `next start`, which cannot see the socket) answers 503 rather than put everyone in one bucket.
 */
export function limited<C = unknown>(path: RoutePath, handler: Handler<C>): (request: Request, context?: C) => Promise<Response> {
  const rule = ruleAt(path);
  const rows = "limits" in rule ? rule.limits : [];
  const style = "limits" in rule ? rule.refusal : "browser";
  const deviceLane = "limits" in rule ? (rule.deviceLane ?? null) : null;
  const needsAddress = rows.some((row) => row.key !== "user" && row.key !== "email");
  return async (incoming, context) => {
    const request = asNextRequest(incoming);
    const gate = await gatehouse();
    // Every refusal's sentences in the request's language; its `error` code stays as it is.
    const locale = gate.i18n.localeOf(request.headers);
    // The request's trace (lib/tracing/spans.ts): one span named by the route, its status the outcome.
    const response = await inSpan(
      `gatehouse ${path}`,
      () => answer(gate, request, locale, context),
      (sent) => String(sent.status),
      true,
    );
    return localized(response, locale, gate.i18n.translator(locale));
  };

  async function answer(gate: Gatehouse, request: NextRequest, locale: string, context: C | undefined): Promise<Response> {
    // Below DISK_MIN_FREE_MB, where readiness says 503 too: a request that may write is refused
    // before anything (the limiter's store included) writes, so PGlite never meets a full disk.
    if (gate.disk?.refusing() && request.method !== "GET" && request.method !== "HEAD") {
      gate.metrics.unavailable.inc({ route: path, cause: "disk" });
      return serviceUnavailable();
    }
    const client = gate.clientAddress(request.headers);
    if (needsAddress && client.source === "unknown") return noClientAddress();
    // The language a sign-in records for the account's mails: only one the request stated (a
    // client that says none, like most API clients, leaves the account's as it is).
    const stated =
      request.headers.has("accept-language") || localeCookie(request.headers.get("cookie"), gate.i18n.cookieName) !== undefined;
    // The signature alone, no read: whether the device is live, and whose, is for the corridor.
    const deviceId = deviceLane ? gate.devices.doorChecked(deviceTokenOf(request, gate.config), gate.clock()) : null;
    const lane = deviceLane && deviceId ? { policy: deviceLane, deviceId } : null;
    const limits = new RouteLimits(gate, client, path, rows, style, request.headers.get("user-agent"), stated ? locale : null, lane);
    try {
      const refused = (await senderRefused(rule, request, limits)) ?? (await limits.leading());
      if (refused) return refused;
      // Next.js always passes the context; a route with params is only ever called with it.
      const response = await handler(request, limits, context as C);
      gate.dataHealth.answered();
      // Rows a device cookie put off and the handler never reached: a failure of the address's.
      await limits.settle();
      if (response.status < 400 && limits.pending.length > 0) {
        gate.log.error({ event: "route_limit_skipped", path, policies: limits.pending.map((row) => row.policy) });
      }
      return response;
    } catch (error) {
      await limits.settle().catch(() => {});
      return failed(gate, path, error);
    }
  }
}

/**
 * The CSRF rule's same-origin step (lib/http/csrf.ts) as the route's row says, from the headers:
 * the refusal, or null. Before the body is read, and before the address's rows: another site's
 * page open in the browsers of an office (one address) makes them post here, and were those posts
 * counted there they would spend the office's budgets (its checks for new devices: everyone
 * mailbox first). So they spend only `crossSiteRefusals`, which bounds a flood of them.
 *
 * Nothing is owed by skipping the rows. A refused request reaches no handler, no body, no
 * account and no password check: the rows bound exactly that work. No row is deferred yet either
 * (the device lane defers rows in `leading`, which has not run), so nothing is left for `settle`
 * to charge, and a device cookie changes nothing here. And a client cannot get past a budget by
 * naming another site: that only gets it refused; to be served it must name the app's own pages,
 * and then it meets every row as before.
 */
async function senderRefused(rule: RouteRule, request: NextRequest, limits: RouteLimits): Promise<Response | null> {
  const { gate } = limits;
  const verdict = sender(request.headers, request.method, rule.senders, gate.config);
  if (verdict === "allowed") return null;
  await request.body?.cancel().catch(() => {});
  const spent = await limits.refusedSender(request.method);
  if (spent) return spent;
  if (verdict === "json_required") return jsonRequired();
  gate.log.info({ event: "cross_site_write_refused", path: rule.path });
  return csrfRefused(rule.senders?.cookieless ? "api" : "page");
}

/**
 * What a route that threw answers. A database or disk failure: 503 unavailable with Retry-After,
 * counted, logged once per episode. Anything else is a bug: 500 JSON, logged each time, never a
 * stack trace to the client.
 */
function failed(gate: Gatehouse, path: RoutePath, error: unknown): Response {
  gate.dataHealth.answered();
  gate.dataHealth.failed(error);
  const cause = outageCause(error);
  if (cause) {
    gate.metrics.unavailable.inc({ route: path, cause });
    gate.outages.failed(cause, path, error);
    return serviceUnavailable();
  }
  gate.log.error({ event: "route_failed", path, err: messageOf(error) });
  return jsonError(500, "internal", sentence("refusals.internal"));
}
