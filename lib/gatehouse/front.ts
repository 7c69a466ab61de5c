import type { AppConfig } from "@/lib/config/env";
import type { KnownDevices } from "@/lib/devices/known-devices";
import { deviceIdOf, doorCheckedDeviceId } from "@/lib/devices/device-token";
import type { DigestTally } from "@/lib/digest/tally";
import { parseTrustedProxies, clientAddressResolver, type ClientAddress } from "@/lib/http/client-address";
import { deviceTokenOfHeader } from "@/lib/http/cookies";
import { Door, DOOR_EXEMPT_PATHS, eventLoopUtilisation, type UtilisationMeter } from "@/lib/http/door";
import { doorPolicy } from "@/lib/http/door-rules";
import { sender } from "@/lib/http/csrf";
import { FastPathCache, type FastRoute, type HeaderReader, type SenderRoute } from "@/lib/http/fast-path";
import { busy } from "@/lib/http/refusals";
import { localized } from "@/lib/http/responses";
import { ROUTE_RULES } from "@/lib/http/route-policies";
import type { I18n } from "@/lib/i18n/i18n";
import type { Logger } from "@/lib/log/logger";
import type { Metrics } from "@/lib/log/metrics";
import { throttled } from "@/lib/log/throttled";
import type { HashBudget } from "@/lib/password/hash-budget";

type Settings = Pick<AppConfig, "http" | "devices" | "rateLimit" | "nodeEnv">;

type Deps = {
  clock: () => number;
  /** For intervals only (the door): never steps, unlike the wall clock. */
  monotonicMs: () => number;
  log: Logger;
  metrics: Metrics;
  i18n: I18n;
  devices: KnownDevices;
  hashBudget: HashBudget;
  digestTally: DigestTally | null;
  /** The header server.mjs writes each socket's address into (GatehouseOptions.peerHeader), read once at start. */
  peerHeader: string | undefined;
  utilisation?: UtilisationMeter;
};

/** The front room of a Gatehouse: who the client is, and what server.mjs answers before Next.js. */
export type FrontRoom = {
  clientAddress(headers: Headers): ClientAddress;
  /** Refusals by address that server.mjs answers without entering Next.js, until their retry time. */
  fastPath: FastPathCache;
  /** Strangers wait here while the event loop is busy (lib/http/door.ts); null: DOOR_BUSY_SHARE=1. */
  door: Door | null;
};

export function buildFront(settings: Settings, deps: Deps): FrontRoom {
  const resolveClient = clientResolver(settings, deps.peerHeader);
  // A device cookie whose username-free signature holds, from a raw Cookie header: an HMAC, no
  // read. The door schedules by it, and the fast path lets it through to its device lane.
  const signedDeviceToken = (headers: HeaderReader): string | null => {
    const token = deviceTokenOfHeader(headers.get("cookie"), settings);
    return doorCheckedDeviceId(settings.devices.cookieSecret, token, deps.clock()) === null ? null : token!;
  };
  const fastPath = buildFastPath(settings, deps, resolveClient, signedDeviceToken);
  return {
    clientAddress: clientAddressOf(resolveClient, deps),
    fastPath,
    door: settings.http.door === null ? null : buildDoor(settings.http.door, deps, fastPath, signedDeviceToken),
  };
}

function clientResolver(settings: Settings, peerHeader: string | undefined): (headers: HeaderReader) => ClientAddress {
  const trustedProxies = parseTrustedProxies(settings.http.trustedProxies);
  const trustedNetworks = parseTrustedProxies(settings.http.trustedNetworks, "TRUSTED_NETWORKS");
  return clientAddressResolver({ trustedProxies, trustedNetworks, ipv6PrefixLength: settings.http.ipv6PrefixLength, peerHeader });
}

/** The routes' client address: counted and logged here, once (the fast path resolves it again, silently). */
function clientAddressOf(resolveClient: (headers: HeaderReader) => ClientAddress, deps: Deps): FrontRoom["clientAddress"] {
  let warnedUnknownPeer = false;
  // Protection is weakened (these requests escape the per-address limits): error, once per 10 s.
  const reportMalformedHop = throttled(10_000, (hop: string) =>
    deps.log.error({ event: "forwarded_for_malformed", hop, hint: "a trusted proxy wrote an X-Forwarded-For hop that is no address" }),
  );
  return (headers) => {
    const client = resolveClient(headers);
    if (client.source === "malformed") {
      deps.metrics.forwardedForMalformed.inc();
      reportMalformedHop(client.malformedHop ?? "");
    }
    if (client.source === "unknown" && !warnedUnknownPeer) {
      warnedUnknownPeer = true;
      // Routes with address limits answer 503 until the server runs behind server.mjs.
      deps.log.error({ event: "client_address_unknown", hint: "run server.mjs (npm start), not next start" });
    }
    return client;
  };
}

/** Routes whose first limit is keyed by the address alone, at a fixed path: the fast path's. */
function fastRoutes(): FastRoute[] {
  return ROUTE_RULES.flatMap((rule) =>
    "limits" in rule && rule.limits[0]?.key === "address" && !rule.path.includes("[")
      ? [{ method: rule.method, path: rule.path, style: rule.refusal, deviceLane: rule.deviceLane !== undefined }]
      : [],
  );
}

/**
 * Routes whose CSRF refusals, once the address's `crossSiteRefusals` are spent, the fast path
 * answers: those with a limited write at a fixed path, for the requests their same-origin step
 * refuses (the very rule of lib/http/csrf.ts, from the headers alone).
 */
function senderRoutes(settings: Settings): SenderRoute[] {
  return ROUTE_RULES.flatMap((rule) =>
    "limits" in rule && rule.method !== "GET" && !rule.path.includes("[") && !rule.senders?.anySite
      ? [
          {
            method: rule.method,
            path: rule.path,
            style: rule.refusal,
            refusedSender: (headers: HeaderReader) => sender(headers, rule.method, rule.senders, settings) !== "allowed",
          },
        ]
      : [],
  );
}

function buildFastPath(
  settings: Settings,
  deps: Deps,
  resolveClient: (headers: HeaderReader) => ClientAddress,
  signedDeviceToken: (headers: HeaderReader) => string | null,
): FastPathCache {
  const { i18n } = deps;
  return new FastPathCache(
    fastRoutes(),
    resolveClient,
    deps.clock,
    settings.rateLimit.memoryMaxEntries,
    settings.nodeEnv === "production",
    (path) => {
      deps.metrics.fastPathRefusals.inc({ route: path });
      deps.digestTally?.recordEarlyRefusal(path);
      deps.log.debug({ event: "refused_early", path });
    },
    {
      // The reader itself, not a Headers built from it: a Headers per refusal cost more than the rest of the lookup.
      of: (headers) => i18n.localeOf(headers),
      say: (response, locale) => localized(response, locale, i18n.translator(locale)),
    },
    (headers) => signedDeviceToken(headers) !== null,
    senderRoutes(settings),
  );
}

function buildDoor(
  settings: NonNullable<AppConfig["http"]["door"]>,
  deps: Deps,
  fastPath: FastPathCache,
  signedDeviceToken: (headers: HeaderReader) => string | null,
): Door {
  // A stranger sent away is service refused: said once per 10 s, counted every time.
  const reportDoorBusy = throttled(10_000, () =>
    deps.log.warn({ event: "door_busy", effect: "requests without a known device waited their longest and were answered 503" }),
  );
  return new Door(doorPolicy(settings), {
    // Intervals only: on the wall clock, a step back would stop every refill and trickle.
    clock: deps.monotonicMs,
    utilisation: deps.utilisation ?? eventLoopUtilisation(),
    deviceToken: signedDeviceToken,
    recognise: async (token) => ((await deps.devices.isKnown(token, deps.clock())) ? deviceIdOf(token) : null),
    busyAnswer: (retryAfterMs, headers) => fastPath.refusal(busy(retryAfterMs), headers),
    exempt: DOOR_EXEMPT_PATHS,
    onWait: (outcome) => {
      deps.metrics.doorWaits.inc({ outcome });
      if (outcome === "busy") reportDoorBusy(undefined);
    },
    onKnownDevice: () => deps.metrics.doorKnownDevices.inc(),
    ownerCheckRunning: () => deps.hashBudget.trustedExecuting > 0,
  });
}
