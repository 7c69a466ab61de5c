import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { LRUCache } from "lru-cache";
import {
  freshAllowance,
  freshHoldLedger,
  holdInForce,
  refill,
  retryAfterMsOf,
  sampleHold,
  windowDue,
  type Allowance,
  type DoorPolicy,
  type HoldLedger,
} from "./door-rules";
import type { FastAnswer, HeaderReader } from "./fast-path";

/** What server.mjs does with a request at the door. */
export type DoorPass =
  | { kind: "in"; leave(): void }
  /** Waited `maxWaitMs` for a turn: 503 busy with Retry-After. */
  | { kind: "busy"; answer: FastAnswer }
  /** The client left while waiting: nothing to answer. */
  | { kind: "gone" };

/** The door as server.mjs sees it (published on globalThis, lib/server-contract.mjs). */
export type DoorKeeper = {
  /** `left`: aborted once the client is gone; asked for only when the request may wait (most never do). */
  enter(method: string, url: string, headers: HeaderReader, left: () => AbortSignal): Promise<DoorPass>;
};

/** How busy the event loop was since the last call, 0 to 1 (performance.eventLoopUtilization in production). */
export type UtilisationMeter = () => number;

export type DoorDeps = {
  /** A monotonic clock in ms (performance.now): the door measures intervals, never dates. */
  clock: () => number;
  utilisation: UtilisationMeter;
  /**
   * The known-device token the request's cookie holds, read as the routes read it, if its
   * second MAC holds (lib/devices/device-token.ts): a made-up token is no token here, at no cost.
   */
  deviceToken(headers: HeaderReader): string | null;
  /** The id of the live device `token` names (its MAC and row checked), else null: a database read. */
  recognise(token: string): Promise<string | null>;
  /** Paths that go straight in, 20 a second (health and metrics: a probe must see the instance as it is). */
  exempt: ReadonlySet<string>;
  /** The 503 a stranger gets after the longest wait, rendered for its request. */
  busyAnswer(retryAfterMs: number, headers: HeaderReader): Promise<FastAnswer>;
  onWait?: (outcome: "entered" | "busy" | "gone", waitedMs: number) => void;
  onKnownDevice?: () => void;
  /**
   * Whether a known device's password check runs now (the hash budget's trusted lane, which
   * only a claimed known device enters, within its lane's hourly allowance). Meanwhile no
   * stranger gets in on the allowance and the window counts as busy: Argon2id is bound by
   * memory, and strangers' work on the event loop beside it slowed it (about 40% under part 11's
   * attack). The floor still lets one in each `floorMs`, and checks hold the door for at most
   * `holdShare` of the time (lib/http/door-rules.ts).
   */
  ownerCheckRunning?: () => boolean;
};

/** Health and metrics do not wait: a probe or a scrape must see the instance as it is, busy or not. */
export const DOOR_EXEMPT_PATHS: ReadonlySet<string> = new Set(["/api/health", "/api/health/ready", "/api/metrics"]);

/** This process's event loop, as a meter: the share of the time since the last reading it was busy. */
export function eventLoopUtilisation(): UtilisationMeter {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return share;
  };
}

type Waiter = { since: number; headers: HeaderReader; resolve(pass: DoorPass): void; left: AbortSignal; onLeft(): void };

const VERDICTS_MAX = 10_000;
// A second: a revoked or replaced device loses its place in at most that (issue 59: a minute let a
// copied token keep it), while a live device's burst of requests still costs one read. lru-cache
// keeps an entry while its age is at most the ttl: 999 ms is gone by the second.
const VERDICT_TTL_MS = 999;
const LOOKUPS_PER_WINDOW = 2;
const EXEMPT_PER_SECOND = 20;
// Past it a stranger is answered 503 at once (MAX_CONNECTIONS' default).
const MAX_WAITING = 1_024;
const FALLBACK_BUSY: FastAnswer = {
  status: 503,
  headers: { "content-type": "application/json", "cache-control": "no-store", "retry-after": "10" },
  body: JSON.stringify({ error: "busy", message: "The server is busy. Try again in a few seconds.", retryAfterSeconds: 10 }),
};

const IN: DoorPass = { kind: "in", leave: () => {} };

/**
 * Strangers wait at the door while the event loop is busy; a known device goes past them
 * (docs/decisions/0016-strangers-wait-at-the-door.md). Nothing here decides whether a request may
 * sign in or what it may see: every room behind the door runs as before, for every request. The
 * door decides only when a request starts, so that a flood of strangers cannot fill every turn of
 * the one event loop the owner's sign-in needs.
 */
export class Door implements DoorKeeper {
  private allowance: Allowance;
  private readonly queue: Waiter[] = [];
  private readonly knownInFlight = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  // A live device's token, for a second (scheduling only: the routes check the device again).
  // Other verdicts are not kept: made-up tokens are new each time, and a database blip must not
  // cost the owner the lane.
  private readonly verdicts: LRUCache<string, { device: string }>;
  private lookups = { windowStartMs: 0, used: 0 };
  private exempted = { secondStartMs: 0, used: 0 };
  private lastStrangerInMs: number;
  private hold: HoldLedger;

  constructor(
    private readonly policy: DoorPolicy,
    private readonly deps: DoorDeps,
  ) {
    this.allowance = freshAllowance(deps.clock(), policy);
    this.lastStrangerInMs = deps.clock();
    this.hold = freshHoldLedger(deps.clock(), policy);
    this.verdicts = new LRUCache({ max: VERDICTS_MAX, ttl: VERDICT_TTL_MS, ttlResolution: 0, perf: { now: deps.clock } });
  }

  /** Strangers waiting now (the metric's gauge). */
  get waiting(): number {
    return this.queue.length;
  }

  async enter(method: string, url: string, headers: HeaderReader, leftSignal: () => AbortSignal): Promise<DoorPass> {
    if (this.deps.exempt.has(url.split("?", 1)[0] ?? "") && this.exemptAllowed()) return IN;
    this.refill();
    // First come, first served among strangers: nobody overtakes the queue on a fresh allowance.
    if (this.queue.length === 0 && this.allowanceOpen()) {
      this.allowance = { ...this.allowance, strangers: this.allowance.strangers - 1 };
      this.lastStrangerInMs = this.deps.clock();
      return IN;
    }
    const device = await this.knownDevice(headers);
    if (device !== null && (this.knownInFlight.get(device) ?? 0) < this.policy.perDeviceInFlight) {
      this.deps.onKnownDevice?.();
      return this.knownPass(device);
    }
    const left = leftSignal();
    if (left.aborted) return { kind: "gone" };
    // A full queue answers at once: pipelined or parallel requests cannot pile up without bound.
    if (this.queue.length >= MAX_WAITING) {
      this.deps.onWait?.("busy", 0);
      return this.busy(headers);
    }
    return new Promise<DoorPass>((resolve) => {
      const waiter: Waiter = {
        since: this.deps.clock(),
        headers,
        resolve,
        left,
        onLeft: () => this.release(waiter, { kind: "gone" }),
      };
      left.addEventListener("abort", waiter.onLeft, { once: true });
      this.queue.push(waiter);
      this.tick();
    });
  }

  /** Lets the queue's head in while the allowance lasts, and sends away who waited too long. */
  private tick() {
    this.refill();
    const nowMs = this.deps.clock();
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (nowMs - head.since >= this.policy.maxWaitMs) this.sendAway(head);
      else if (this.allowanceOpen()) {
        this.allowance = { ...this.allowance, strangers: this.allowance.strangers - 1 };
        this.letIn(head, nowMs);
      } else if (nowMs - this.lastStrangerInMs >= this.policy.floorMs) {
        // However busy the loop stays (work the door cannot hold counts too), strangers trickle in.
        this.letIn(head, nowMs);
      } else break;
    }
    // A timer only while someone waits: at rest the door costs nothing.
    if (this.queue.length > 0 && this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.policy.windowMs);
      this.timer.unref?.();
    } else if (this.queue.length === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private refill() {
    const nowMs = this.deps.clock();
    // The meter is read once per window, so it always covers a whole one. A window that ends
    // during an owner's check counts as busy: nothing saved in it bursts in on the check's end.
    if (windowDue(this.allowance, nowMs, this.policy)) {
      const utilisation = this.deps.utilisation();
      this.allowance = refill(this.allowance, nowMs, this.ownerChecking() ? 1 : utilisation, this.policy);
    }
  }

  /** Whether a stranger may go in on the allowance now (the floor is apart). */
  private allowanceOpen(): boolean {
    return this.allowance.strangers >= 1 && !this.ownerChecking();
  }

  /** Whether a known device's check holds strangers now (while the hold has credit, door-rules.ts). */
  private ownerChecking(): boolean {
    this.sampleHold();
    return holdInForce(this.hold);
  }

  /** Brings the hold's ledger up to now: whether a check runs, and whether strangers wait. */
  private sampleHold() {
    const holding = this.deps.ownerCheckRunning?.() === true;
    this.hold = sampleHold(this.hold, this.deps.clock(), holding, this.queue.length > 0, this.policy);
  }

  private letIn(waiter: Waiter, nowMs: number) {
    this.lastStrangerInMs = nowMs;
    this.release(waiter, IN);
  }

  private sendAway(waiter: Waiter) {
    this.release(waiter, null);
    void this.busy(waiter.headers).then((pass) => waiter.resolve(pass));
  }

  /** The 503, said in the request's language; a fixed one if that cannot be rendered. */
  private async busy(headers: HeaderReader): Promise<DoorPass> {
    try {
      return { kind: "busy", answer: await this.deps.busyAnswer(retryAfterMsOf(this.policy), headers) };
    } catch {
      return { kind: "busy", answer: FALLBACK_BUSY };
    }
  }

  /** Takes `waiter` off the queue and answers it (null: sendAway answers once its refusal is rendered). */
  private release(waiter: Waiter, pass: DoorPass | null) {
    const at = this.queue.indexOf(waiter);
    if (at === -1) return;
    this.queue.splice(at, 1);
    waiter.left.removeEventListener("abort", waiter.onLeft);
    this.deps.onWait?.(pass === null ? "busy" : pass.kind === "in" ? "entered" : "gone", this.deps.clock() - waiter.since);
    // The hold is charged only while strangers wait: the ledger notes the moment none is left.
    if (this.queue.length === 0) this.sampleHold();
    if (pass !== null) waiter.resolve(pass);
  }

  /**
   * Health checks come from a few load balancers a few times a second: up to EXEMPT_PER_SECOND go
   * straight in; a flood of them (the routes are unlimited) waits as strangers do.
   */
  private exemptAllowed(): boolean {
    const nowMs = this.deps.clock();
    if (nowMs - this.exempted.secondStartMs >= 1_000) this.exempted = { secondStartMs: nowMs, used: 0 };
    return this.exempted.used++ < EXEMPT_PER_SECOND;
  }

  /**
   * Only a request that would otherwise wait asks, and at most LOOKUPS_PER_WINDOW uncached tokens
   * a window are looked up (past that, a request waits as a stranger's does). The tokens that get
   * this far were issued by this server (their second MAC holds), so each costs an attacker a
   * successful sign-in; the read tells a revoked or replaced device from a live one.
   */
  private async knownDevice(headers: HeaderReader): Promise<string | null> {
    let token: string | null;
    try {
      token = this.deps.deviceToken(headers);
    } catch {
      // A cookie the parser chokes on is no token: the request waits as a stranger's, never a 500.
      return null;
    }
    if (token === null) return null;
    const cached = this.verdicts.get(token);
    if (cached) return cached.device;
    const nowMs = this.deps.clock();
    if (nowMs - this.lookups.windowStartMs >= this.policy.windowMs) this.lookups = { windowStartMs: nowMs, used: 0 };
    if (this.lookups.used >= LOOKUPS_PER_WINDOW) return null;
    this.lookups.used++;
    try {
      const device = await this.deps.recognise(token);
      if (device !== null) this.verdicts.set(token, { device });
      return device;
    } catch {
      return null;
    }
  }

  private knownPass(device: string): DoorPass {
    this.knownInFlight.set(device, (this.knownInFlight.get(device) ?? 0) + 1);
    let left = false;
    return {
      kind: "in",
      leave: () => {
        if (left) return;
        left = true;
        const count = (this.knownInFlight.get(device) ?? 1) - 1;
        if (count <= 0) this.knownInFlight.delete(device);
        else this.knownInFlight.set(device, count);
      },
    };
  }
}
