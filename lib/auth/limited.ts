import { localeCookie } from "@/lib/i18n/locales";
import { NextRequest } from "next/server";
import { gatehouse, type Gatehouse } from "@/lib/app";
import { logSecurity } from "@/lib/auth/security-log";
import type { ClientAddress } from "@/lib/http/client-address";
import { outageCause } from "@/lib/rate-limit/outage";
import { limitStoreUnavailable, noClientAddress, REFUSE, serviceUnavailable } from "@/lib/http/refusals";
import { jsonError, localized } from "@/lib/http/responses";
import { sentence } from "@/lib/i18n/sentence";
import { ruleAt, type LimitKey, type RefusalStyle, type RouteLimit, type RoutePath } from "@/lib/http/route-policies";
import { messageOf } from "@/lib/log/message";

/**
 * One request's walk through its route's limits. Rows apply strictly in table order: the wrapper
 * applies the leading rows that need only the address, and the handler applies the rest as soon as
 * it knows their key (`limit("addressAndUsername", email)`, `limit("user", id)`).
 */
export class RouteLimits {
  private next = 0;

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
  ) {}

  /** Applies the next rows keyed by `key`; a refusal to send, or null to go on. */
  async limit(key: LimitKey, value = ""): Promise<Response | null> {
    if (this.rows[this.next]?.key !== key) throw new Error(`${this.path}: no ${key} limit is next in ROUTE_RULES`);
    while (this.rows[this.next]?.key === key) {
      const row = this.rows[this.next++]!;
      const result = await this.gate.limiter.consume(row.policy, this.keyParts(key, value));
      this.gate.metrics.limitDecisions.inc({ policy: row.policy, result: result.allowed ? "allowed" : "refused" });
      // A fail-closed limit whose store is down refused nobody in particular: 503, not "too many
      // attempts", and nothing for the fast path to remember (the breaker already logged the outage).
      if (!result.allowed && result.storeFailed) {
        this.gate.metrics.unavailable.inc({ route: this.path, cause: "rate_limit_store" });
        return limitStoreUnavailable(result);
      }
      if (!result.allowed) {
        logSecurity(this.gate, {
          route: this.path,
          outcome: "rate_limited",
          client: this.client,
          policy: row.policy,
          ...(key === "addressAndUsername" ? { email: value } : key === "user" ? { userId: value } : {}),
        });
        // The first limit, by address alone: the fast path in server.mjs answers the next ones.
        if (this.next === 1 && key === "address") this.gate.fastPath.remember(this.path, this.client, result);
        return REFUSE[this.style](result);
      }
    }
    return null;
  }

  /** The rows not applied yet (a handler that answered 2xx with one left skipped a limit). */
  get pending(): readonly RouteLimit[] {
    return this.rows.slice(this.next);
  }

  /** Applies the leading rows that need nothing but the client address. */
  async leading(): Promise<Response | null> {
    for (;;) {
      const key = this.rows[this.next]?.key;
      if (key !== "address" && key !== "addressAndRoute") return null;
      const refused = await this.limit(key);
      if (refused) return refused;
    }
  }

  private keyParts(key: LimitKey, value: string): string[] {
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
    }
  }
}

type Handler<C> = (request: NextRequest, limits: RouteLimits, context: C) => Promise<Response>;

/**
 * A route handler behind its row of ROUTE_RULES: the client address, then the leading limits,
 * then the handler. A route with address limits and no trustworthy client address (plain
 * `next start`, which cannot see the socket) answers 503 rather than put everyone in one bucket.
 */
export function limited<C = unknown>(path: RoutePath, handler: Handler<C>): (request: Request, context?: C) => Promise<Response> {
  const rule = ruleAt(path);
  const rows = "limits" in rule ? rule.limits : [];
  const style = "limits" in rule ? rule.refusal : "browser";
  const needsAddress = rows.some((row) => row.key !== "user");
  return async (incoming, context) => {
    const request = incoming instanceof NextRequest ? incoming : new NextRequest(incoming);
    const gate = await gatehouse();
    // Every refusal's sentences in the request's language; its `error` code stays as it is.
    const locale = gate.i18n.localeOf(request.headers);
    return localized(await answer(gate, request, locale, context), locale, gate.i18n.translator(locale));
  };

  async function answer(gate: Gatehouse, request: NextRequest, locale: string, context: C | undefined): Promise<Response> {
    const client = gate.clientAddress(request.headers);
    if (needsAddress && client.source === "unknown") return noClientAddress();
    // The language a sign-in records for the account's mails: only one the request stated (a
    // client that says none, like most API clients, leaves the account's as it is).
    const stated = request.headers.has("accept-language") || localeCookie(request.headers.get("cookie")) !== undefined;
    const limits = new RouteLimits(gate, client, path, rows, style, request.headers.get("user-agent"), stated ? locale : null);
    try {
      const refused = await limits.leading();
      if (refused) return refused;
      // Next.js always passes the context; a route with params is only ever called with it.
      const response = await handler(request, limits, context as C);
      if (response.status < 400 && limits.pending.length > 0) {
        gate.log.error({ event: "route_limit_skipped", path, policies: limits.pending.map((row) => row.policy) });
      }
      return response;
    } catch (error) {
      return failed(gate, path, error);
    }
  }
}

/**
 * What a route that threw answers. A database or disk failure: 503 unavailable with Retry-After,
 * counted, logged once per episode. Anything else is a bug: 500 JSON, logged each time, never a
 * stack trace to the client.
 */
function failed(gate: Gatehouse, path: RoutePath, error: unknown): Response {
  const cause = outageCause(error);
  if (cause) {
    gate.metrics.unavailable.inc({ route: path, cause });
    gate.outages.failed(cause, path, error);
    return serviceUnavailable();
  }
  gate.log.error({ event: "route_failed", path, err: messageOf(error) });
  return jsonError(500, "internal", sentence("refusals.internal"));
}
