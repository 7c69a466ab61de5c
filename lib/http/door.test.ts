import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Door, type DoorDeps, type DoorPass } from "./door";
import { freshAllowance, freshHoldLedger, holdInForce, refill, sampleHold, type DoorPolicy } from "./door-rules";
import type { FastAnswer, HeaderReader } from "./fast-path";

// The floor is past the longest wait here; its own test sets it.
const POLICY: DoorPolicy = {
  busyShare: 0.7,
  windowMs: 10,
  strangersPerWindow: 2,
  burst: 4,
  floorMs: 5_000,
  maxWaitMs: 1_000,
  perDeviceInFlight: 2,
  holdShare: 0.25,
  holdBurstMs: 100,
};
const LIVE = "live-token";
const LIVE_DEVICE = "device-1";

describe("door rules", () => {
  it("adds the strangers of each quiet window, up to the burst", () => {
    const empty = { strangers: 0, refilledAtMs: 0 };
    expect(refill(empty, 10, 0.1, POLICY)).toEqual({ strangers: 2, refilledAtMs: 10 });
    expect(refill(empty, 30, 0.1, POLICY)).toEqual({ strangers: 4, refilledAtMs: 30 });
    expect(refill({ strangers: 3, refilledAtMs: 0 }, 10, 0.1, POLICY).strangers).toBe(4);
  });

  it("takes away what was saved after a busy window", () => {
    expect(refill(freshAllowance(0, POLICY), 10, 0.71, POLICY)).toEqual({ strangers: 0, refilledAtMs: 10 });
  });

  it("spends the hold's credit by the time held, late samples included, and earns it back at holdShare", () => {
    let ledger = freshHoldLedger(0, POLICY);
    expect(ledger.creditMs).toBe(100);
    ledger = sampleHold(ledger, 0, true, true, POLICY);
    expect(holdInForce(ledger)).toBe(true);
    // Samples 40 ms apart (a loop that turns late) count all 40 ms: 100 + 0.25 × 80 - 80.
    ledger = sampleHold(ledger, 40, true, true, POLICY);
    ledger = sampleHold(ledger, 80, true, true, POLICY);
    expect(ledger.creditMs).toBe(40);
    // Continuous checks: the hold lifts after burst / (1 - share), about 133 ms, not a period's quarter later.
    for (let at = 90; at <= 130; at += 10) ledger = sampleHold(ledger, at, true, true, POLICY);
    expect(holdInForce(ledger)).toBe(true);
    ledger = sampleHold(ledger, 140, true, true, POLICY);
    expect(holdInForce(ledger)).toBe(false);
    // Over a long run of checks it is in force a quarter of the time.
    let inForce = 0;
    for (let at = 150; at < 10_150; at += 10) {
      ledger = sampleHold(ledger, at, true, true, POLICY);
      if (holdInForce(ledger)) inForce++;
    }
    expect(inForce / 1_000).toBeGreaterThan(0.2);
    expect(inForce / 1_000).toBeLessThanOrEqual(0.26);
  });

  it.each([150, 400, 2_000])("counts a late turn of %i ms whole while strangers waited: the hold still lifts", (gapMs) => {
    // Back-to-back checks and a loop that turns late, strangers waiting all along.
    let ledger = sampleHold(freshHoldLedger(0, POLICY), 0, true, true, POLICY);
    let heldMs = 0;
    let longestMs = 0;
    let stretchMs = 0;
    for (let at = gapMs; at <= 60_000; at += gapMs) {
      const wasInForce = holdInForce(ledger);
      ledger = sampleHold(ledger, at, true, true, POLICY);
      stretchMs = wasInForce ? stretchMs + gapMs : 0;
      heldMs += wasInForce ? gapMs : 0;
      longestMs = Math.max(longestMs, stretchMs);
    }
    // A quarter of the time and one burst, and the turn that spent the last of the credit.
    expect(heldMs).toBeLessThanOrEqual(0.25 * 60_000 + POLICY.holdBurstMs + gapMs);
    expect(longestMs).toBeLessThanOrEqual(Math.ceil(POLICY.holdBurstMs / gapMs) * gapMs);
  });

  it("counts nothing of a gap when nobody waited, however long", () => {
    // The credit spent by back-to-back checks while strangers waited ...
    let ledger = sampleHold(freshHoldLedger(0, POLICY), 0, true, true, POLICY);
    for (let at = 10; at <= 120; at += 10) ledger = sampleHold(ledger, at, true, true, POLICY);
    const spentMs = ledger.creditMs;
    // ... until the queue empties at 125 ms while a check still runs: those 5 ms were held, and the
    // 100 ms after, when nobody waited, earn and do not spend.
    ledger = sampleHold(ledger, 125, true, false, POLICY);
    ledger = sampleHold(ledger, 225, true, false, POLICY);
    expect(ledger.creditMs).toBeCloseTo(spentMs - 5 + 0.25 * 105, 9);
    // And 10 s of no samples between two checks is not 10 s held.
    ledger = sampleHold(ledger, 10_225, true, true, POLICY);
    expect(ledger.creditMs).toBe(POLICY.holdBurstMs);
    expect(holdInForce(ledger)).toBe(true);
  });

  it("keeps counting after a clock reading that is not a number", () => {
    let ledger = sampleHold(freshHoldLedger(0, POLICY), 0, true, true, POLICY);
    ledger = sampleHold(ledger, Number.NaN, true, true, POLICY);
    ledger = sampleHold(ledger, Number.POSITIVE_INFINITY, true, true, POLICY);
    expect(Number.isFinite(ledger.creditMs)).toBe(true);
    expect(Number.isFinite(ledger.lastSampleMs)).toBe(true);
    for (let at = 10; at <= 200; at += 10) ledger = sampleHold(ledger, at, true, true, POLICY);
    expect(holdInForce(ledger)).toBe(false);
    ledger = sampleHold(ledger, 2_000, true, true, POLICY);
    expect(holdInForce(ledger)).toBe(true);
  });

  it("changes nothing before a whole window has passed", () => {
    const allowance = { strangers: 1, refilledAtMs: 5 };
    expect(refill(allowance, 14, 0.99, POLICY)).toBe(allowance);
  });
});

function headersOf(cookie?: string): HeaderReader {
  return { get: (name) => (name === "cookie" ? (cookie ?? null) : null) };
}

function setUp(overrides: Partial<DoorDeps> = {}, policy: DoorPolicy = POLICY) {
  let busy = 0.1;
  const waits: string[] = [];
  const recognise = vi.fn(async (token: string) => (token === LIVE ? LIVE_DEVICE : null));
  const busyAnswer = vi.fn(async (retryAfterMs: number): Promise<FastAnswer> => ({
    status: 503,
    headers: { "retry-after": String(retryAfterMs / 1000) },
    body: "busy",
  }));
  const door = new Door(policy, {
    clock: () => Date.now(),
    utilisation: () => busy,
    deviceToken: (headers) => headers.get("cookie"),
    recognise,
    busyAnswer,
    exempt: new Set(["/api/health"]),
    onWait: (outcome) => waits.push(outcome),
    ...overrides,
  });
  const enter = (cookie?: string, left = new AbortController().signal, url = "/sign-in") =>
    door.enter("GET", url, headersOf(cookie), () => left);
  return { door, enter, recognise, busyAnswer, waits, setBusy: (share: number) => (busy = share) };
}

/** What `promise` has settled to by now, without moving the clock: "waiting" if nothing yet. */
async function settled<T>(promise: Promise<T>): Promise<T | "waiting"> {
  let outcome: T | "waiting" = "waiting";
  void promise.then((value) => (outcome = value));
  await vi.advanceTimersByTimeAsync(0);
  return outcome;
}

describe("the door", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lets a burst of strangers in at rest, then two a quiet window, first come first served", async () => {
    const { door, enter } = setUp();
    for (let i = 0; i < POLICY.burst; i++) expect((await enter()).kind).toBe("in");
    const order: number[] = [];
    const waiting = [0, 1, 2].map((n) => enter().then((pass) => (order.push(n), pass)));
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(3);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect(order).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect(order).toEqual([0, 1, 2]);
    expect((await Promise.all(waiting)).map((pass) => pass.kind)).toEqual(["in", "in", "in"]);
  });

  it("holds strangers while the loop is busy and lets a live known device past them", async () => {
    const { door, enter, recognise, setBusy } = setUp();
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    const stranger = enter();
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(1);
    expect((await enter(LIVE)).kind).toBe("in");
    // The verdict is kept: the device's next request reads nothing.
    expect((await enter(LIVE)).kind).toBe("in");
    expect(recognise).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(5 * POLICY.windowMs);
    expect(await settled(stranger)).toBe("waiting");
    setBusy(0.2);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await stranger).kind).toBe("in");
  });

  // Issue 59: the verdict was kept 60 s, so a revoked or replaced device kept its place that long.
  it("follows a device's revocation within a second: the revoked token then waits as a stranger's", async () => {
    let revoked = false;
    // A hold that never runs out of credit, so that only the verdict tells the device from a stranger.
    const { door, enter, setBusy } = setUp(
      { recognise: vi.fn(async (token: string) => (token === LIVE && !revoked ? LIVE_DEVICE : null)) },
      { ...POLICY, holdShare: 1 },
    );
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await enter(LIVE)).kind).toBe("in");
    revoked = true;
    await vi.advanceTimersByTimeAsync(1_000);
    const after = enter(LIVE);
    expect(await settled(after)).toBe("waiting");
    expect(door.waiting).toBe(1);
    setBusy(0.1);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await after).kind).toBe("in");
  });

  it("lets nobody overtake the queue on an allowance that came between two ticks", async () => {
    const { enter, setBusy } = setUp();
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    const order: string[] = [];
    const first = enter().then((pass) => (order.push("first"), pass));
    await vi.advanceTimersByTimeAsync(0);
    setBusy(0.1);
    // The clock moves a window on, the door's timer not yet run: the newcomer finds an allowance.
    vi.setSystemTime(Date.now() + POLICY.windowMs);
    const second = enter().then((pass) => (order.push("second"), pass));
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    await Promise.all([first, second]);
    expect(order).toEqual(["first", "second"]);
  });

  it("lets a stranger in every floorMs however busy the loop stays", async () => {
    const { enter, setBusy } = setUp({}, { ...POLICY, floorMs: 100 });
    setBusy(1);
    await vi.advanceTimersByTimeAsync(100);
    const order: number[] = [];
    const waiting = [0, 1].map((n) => enter().then((pass) => (order.push(n), pass)));
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect(order).toEqual([0]);
    await vi.advanceTimersByTimeAsync(100 - POLICY.windowMs - 1);
    expect(order).toEqual([0]);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect(order).toEqual([0, 1]);
    expect((await Promise.all(waiting)).map((pass) => pass.kind)).toEqual(["in", "in"]);
  });

  it("lets no stranger in on the allowance while a known device's password check runs, and counts its windows busy", async () => {
    let checking = true;
    const { door, enter } = setUp({ ownerCheckRunning: () => checking });
    // At rest, with the whole burst saved: the stranger still waits for the check.
    const stranger = enter();
    await vi.advanceTimersByTimeAsync(3 * POLICY.windowMs);
    expect(await settled(stranger)).toBe("waiting");
    expect(door.waiting).toBe(1);
    checking = false;
    // The windows of the check saved nothing (no burst after it): two a quiet window again.
    const after = [enter(), enter(), enter()];
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await stranger).kind).toBe("in");
    expect(await settled(after[0]!)).toMatchObject({ kind: "in" });
    expect(await settled(after[2]!)).toBe("waiting");
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await Promise.all(after)).map((pass) => pass.kind)).toEqual(["in", "in", "in"]);
  });

  it("lets a stranger in every floorMs while known devices' checks run without pause", async () => {
    const { enter } = setUp({ ownerCheckRunning: () => true }, { ...POLICY, floorMs: 100 });
    const order: number[] = [];
    const waiting = [0, 1].map((n) => enter().then((pass) => (order.push(n), pass)));
    await vi.advanceTimersByTimeAsync(100 + POLICY.windowMs);
    expect(order).toEqual([0]);
    await vi.advanceTimersByTimeAsync(100);
    expect(order).toEqual([0, 1]);
    expect((await Promise.all(waiting)).map((pass) => pass.kind)).toEqual(["in", "in"]);
  });

  it("holds strangers about 133 ms at a stretch and a quarter of the time, however many checks follow one another", async () => {
    // Known devices' checks back to back (an attacker's many accounts, or a busy instance's owners).
    const { enter } = setUp({ ownerCheckRunning: () => true });
    const order: number[] = [];
    const first = Array.from({ length: 10 }, (_, n) => enter().then((pass) => (order.push(n), pass)));
    await vi.advanceTimersByTimeAsync(120);
    expect(order).toEqual([]);
    // The credit spent, the allowance opens in three windows of four, two a quiet window.
    await vi.advanceTimersByTimeAsync(130);
    expect(order.length).toBeGreaterThanOrEqual(6);
    await vi.advanceTimersByTimeAsync(100);
    expect((await Promise.all(first)).map((pass) => pass.kind)).toEqual(Array.from({ length: 10 }, () => "in"));
    // Back at rest for long enough to earn the credit again, the next stranger is held.
    await vi.advanceTimersByTimeAsync(1_000);
    const next = enter();
    await vi.advanceTimersByTimeAsync(50);
    expect(await settled(next)).toBe("waiting");
  });

  it("counts a loop's late turns whole: checks that never end do not keep a stranger out past the credit", async () => {
    // Each 10 ms tick of the door's timer is 400 ms on its clock: a loop that turns 40 times late.
    const startMs = Date.now();
    const { enter } = setUp({ ownerCheckRunning: () => true, clock: () => startMs + (Date.now() - startMs) * 40 });
    const stranger = enter().then((pass) => pass.kind);
    // Its longest wait (1 s) is two and a half such turns; the credit (100 ms) is spent in the first.
    await vi.advanceTimersByTimeAsync(3 * POLICY.windowMs);
    expect(await settled(stranger)).toBe("in");
  });

  it("does not spend the hold while nobody waits, after the queue empties", async () => {
    const { enter } = setUp({ ownerCheckRunning: () => true }, { ...POLICY, maxWaitMs: 120 });
    // A stranger held 120 ms is sent away: the credit is nearly spent (100 - 0.75 × 120), and nobody waits after.
    const first = enter().then((pass) => pass.kind);
    await vi.advanceTimersByTimeAsync(120);
    expect(await settled(first)).toBe("busy");
    // 200 ms later the credit has grown by a quarter of them (nobody was held meanwhile): the next one is held.
    await vi.advanceTimersByTimeAsync(200);
    const next = enter();
    expect(await settled(next)).toBe("waiting");
  });

  it("lets a live known device past while its own check holds strangers", async () => {
    const { enter } = setUp({ ownerCheckRunning: () => true });
    expect((await enter(LIVE)).kind).toBe("in");
  });

  it("answers 503 at once when the queue is full, and a fixed 503 when the refusal cannot be rendered", async () => {
    const busyAnswer = vi.fn(async (): Promise<FastAnswer> => Promise.reject(new Error("no catalogue")));
    const { door, enter, setBusy } = setUp({ busyAnswer });
    setBusy(1);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    for (let i = 0; i < 1_024; i++) void enter();
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(1_024);
    const pass = await enter();
    expect(pass.kind).toBe("busy");
    expect(pass.kind === "busy" && pass.answer.status).toBe(503);
    expect(door.waiting).toBe(1_024);
  });

  it("makes a forged or revoked device token wait as a stranger", async () => {
    const { door, enter, setBusy } = setUp();
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    void enter("forged-token");
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(1);
  });

  it("makes a request whose cookie the token parser throws on wait as a stranger, not fail", async () => {
    const { door, enter, setBusy } = setUp({
      deviceToken: () => {
        throw new URIError("URI malformed");
      },
    });
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    const stranger = enter("gh_device=%E0%A4%A");
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(1);
    setBusy(0.2);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await stranger).kind).toBe("in");
  });

  it("lets one device past the queue only a few requests at a time", async () => {
    const { door, enter, setBusy } = setUp();
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    const passes = (await Promise.all([enter(LIVE), enter(LIVE)])) as Extract<DoorPass, { kind: "in" }>[];
    expect(passes.map((pass) => pass.kind)).toEqual(["in", "in"]);
    void enter(LIVE);
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(1);
    passes[0]!.leave();
    passes[0]!.leave(); // leaving twice frees one place, not two
    expect((await enter(LIVE)).kind).toBe("in");
    void enter(LIVE);
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(2);
  });

  it("sends a stranger away with 503 after the longest wait", async () => {
    const { door, enter, busyAnswer, waits, setBusy } = setUp();
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    const stranger = enter();
    await vi.advanceTimersByTimeAsync(POLICY.maxWaitMs - POLICY.windowMs);
    expect(await settled(stranger)).toBe("waiting");
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    const pass = await stranger;
    expect(pass).toEqual({ kind: "busy", answer: { status: 503, headers: { "retry-after": "1" }, body: "busy" } });
    expect(busyAnswer).toHaveBeenCalledWith(POLICY.maxWaitMs, expect.anything());
    expect(waits).toEqual(["busy"]);
    expect(door.waiting).toBe(0);
  });

  it("forgets a stranger who left while waiting, and stops its timer once nobody waits", async () => {
    const { door, enter, waits, setBusy } = setUp();
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    const left = new AbortController();
    const stranger = enter(undefined, left.signal);
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    left.abort();
    expect(await stranger).toEqual({ kind: "gone" });
    expect(door.waiting).toBe(0);
    expect(waits).toEqual(["gone"]);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps no timer at rest", async () => {
    const { enter } = setUp();
    expect((await enter()).kind).toBe("in");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("lets health checks straight in while busy, 20 a second: a flood of them waits as strangers do", async () => {
    const { door, enter, setBusy } = setUp();
    setBusy(1);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    for (let i = 0; i < 20; i++) expect((await enter(undefined, undefined, "/api/health?probe=1")).kind).toBe("in");
    void enter(undefined, undefined, "/api/health");
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await enter(undefined, undefined, "/api/health")).kind).toBe("in");
  });

  it("looks up at most two unknown tokens a window: made-up cookies cannot buy a read each", async () => {
    const { enter, recognise, setBusy } = setUp();
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    for (const token of ["made-up-1", "made-up-2", "made-up-3", LIVE]) void enter(token);
    await vi.advanceTimersByTimeAsync(0);
    expect(recognise).toHaveBeenCalledTimes(2);
    // The next window, the owner's token is read.
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await enter(LIVE)).kind).toBe("in");
    expect(recognise).toHaveBeenCalledTimes(3);
  });

  it("does not keep a failed lookup: the owner's next request asks again", async () => {
    let fail = true;
    const recognise = vi.fn(async (token: string) => {
      if (fail) throw new Error("database away");
      return token === LIVE ? LIVE_DEVICE : null;
    });
    const { door, enter, setBusy } = setUp({ recognise });
    setBusy(0.9);
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    void enter(LIVE);
    await vi.advanceTimersByTimeAsync(0);
    expect(door.waiting).toBe(1);
    fail = false;
    await vi.advanceTimersByTimeAsync(POLICY.windowMs);
    expect((await enter(LIVE)).kind).toBe("in");
  });
});
