import { describe, expect, it } from "vitest";
import { connectionGuard, effectiveCap, openFilesSoftLimit, RESERVED_DESCRIPTORS } from "./connections.mjs";

/** A socket as the guard sees it: an address, and whether it was closed. */
function socket(remoteAddress: string) {
  return {
    remoteAddress,
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  };
}

describe("the connection guard", () => {
  it("refuses an address's new connection past its share while its own are fresh, never another visitor's", () => {
    let nowMs = 0;
    const guard = connectionGuard({ cap: 100, perAddress: 3, staleMs: 2_000, nowMs: () => nowMs });
    const held = [1, 2, 3].map(() => socket("198.51.100.7"));
    for (const s of held) expect(guard.admit(s)).toBe(true);
    const visitor = socket("203.0.113.1");
    expect(guard.admit(visitor)).toBe(true);

    // A client that reopens what it loses would loop through requests: its newest waits instead.
    expect(guard.admit(socket("198.51.100.7"))).toBe(false);
    expect(held.some((s) => s.destroyed)).toBe(false);
    expect(guard.stats()).toMatchObject({ open: 4, refused: { share: 1, cap: 0 } });

    // Idle long enough, its stalest connection gives way (a crowd behind one address recycles them).
    nowMs = 1_000;
    guard.busy(held[0]!);
    guard.idle(held[0]!);
    nowMs = 2_500;
    expect(guard.admit(socket("198.51.100.7"))).toBe(true);
    expect(held.map((s) => s.destroyed)).toEqual([false, true, false]);
    expect(visitor.destroyed).toBe(false);
    expect(guard.stats()).toMatchObject({ open: 4, reclaimed: { share: 1, cap: 0 } });
  });

  it("gives a client in TRUSTED_NETWORKS its allowance of shares", () => {
    const guard = connectionGuard({ cap: 100, perAddress: 2 });
    for (let i = 0; i < 6; i++) expect(guard.admit(socket("198.51.100.7"), "198.51.100.7", 3)).toBe(true);
    expect(guard.admit(socket("198.51.100.7"), "198.51.100.7", 3)).toBe(false);
  });

  it("refuses an address's new connection when its whole share is busy with requests", () => {
    const guard = connectionGuard({ cap: 100, perAddress: 2 });
    const held = [socket("198.51.100.7"), socket("198.51.100.7")];
    for (const s of held) {
      guard.admit(s);
      guard.busy(s);
    }
    expect(guard.admit(socket("198.51.100.7"))).toBe(false);
    expect(held.some((s) => s.destroyed)).toBe(false);
    expect(guard.stats().refused.share).toBe(1);
    // Another address is not affected.
    expect(guard.admit(socket("203.0.113.1"))).toBe(true);
  });

  it("near the cap, closes the biggest holder's idle connections for a new visitor", () => {
    let nowMs = 0;
    const logged: unknown[] = [];
    const guard = connectionGuard({ cap: 10, perAddress: 10, onFull: (stats) => logged.push(stats), nowMs: () => nowMs });
    const flood = Array.from({ length: 9 }, () => socket("198.51.100.7"));
    for (const s of flood) guard.admit(s);
    nowMs = 1_000;
    const owner = socket("203.0.113.1");
    guard.admit(owner);
    expect(guard.stats().open).toBe(9);
    expect(flood[0]!.destroyed).toBe(true);

    for (let i = 2; i <= 5; i++) expect(guard.admit(socket(`203.0.113.${i}`))).toBe(true);
    expect(owner.destroyed).toBe(false);
    expect(flood.filter((s) => s.destroyed).length).toBe(5);
    expect(guard.stats().open).toBeLessThanOrEqual(10);
  });

  it("near the cap, keeps a connection idle for less than minIdleMs (a request the loop has not read yet)", () => {
    let nowMs = 0;
    const guard = connectionGuard({ cap: 10, perAddress: 10, minIdleMs: 1_000, nowMs: () => nowMs });
    // Behind a trusted proxy every visitor's connection counts under one key, the heaviest.
    const proxied = Array.from({ length: 9 }, () => socket("127.0.0.1"));
    for (const s of proxied) guard.admit(s, null);
    nowMs = 500;
    expect(guard.admit(socket("203.0.113.1"))).toBe(true);
    expect(proxied.filter((s) => s.destroyed)).toHaveLength(0);
    // At the cap, room is made whatever the idle connection's age: a new visitor is not refused.
    expect(guard.admit(socket("203.0.113.2"))).toBe(true);
    expect(proxied.filter((s) => s.destroyed)).toHaveLength(1);
  });

  it("at the cap, closes the request that has been arriving longest (a slow body), never one that has arrived", () => {
    let nowMs = 0;
    const guard = connectionGuard({ cap: 3, perAddress: 3, staleMs: 2_000, nowMs: () => nowMs });
    const arrived = socket("192.0.2.1");
    const slow = socket("192.0.2.2");
    const slower = socket("192.0.2.3");
    for (const s of [arrived, slow, slower]) guard.admit(s);
    guard.busy(slower, () => true);
    nowMs = 1_000;
    guard.busy(slow, () => true);
    guard.busy(arrived, () => false);
    // Arriving for 1.5 s and 0.5 s: a client on a slow link, not yet a slow client.
    nowMs = 1_500;
    expect(guard.admit(socket("203.0.113.1"))).toBe(false);
    nowMs = 2_500;
    const visitor = socket("203.0.113.2");
    expect(guard.admit(visitor)).toBe(true);
    expect(slower.destroyed).toBe(true);
    expect(slow.destroyed).toBe(false);
    expect(arrived.destroyed).toBe(false);
    guard.busy(visitor, () => false);
    nowMs = 3_000;
    const next = socket("203.0.113.3");
    expect(guard.admit(next)).toBe(true);
    expect(slow.destroyed).toBe(true);
    guard.busy(next, () => false);
    // What is left has arrived: a request in the server keeps its slot, and the next one waits outside.
    expect(guard.admit(socket("203.0.113.4"))).toBe(false);
    expect(arrived.destroyed).toBe(false);
    expect(visitor.destroyed).toBe(false);
    expect(guard.stats()).toMatchObject({ open: 3, reclaimed: { cap: 2 } });
  });

  it("refuses a new connection at the cap only when every open one is busy, and says so once", () => {
    let nowMs = 0;
    const logged: { open: number }[] = [];
    const guard = connectionGuard({ cap: 3, perAddress: 3, onFull: (stats) => logged.push(stats), nowMs: () => nowMs });
    for (const address of ["192.0.2.1", "192.0.2.2", "192.0.2.3"]) {
      const s = socket(address);
      guard.admit(s);
      guard.busy(s);
    }
    expect(guard.admit(socket("192.0.2.4"))).toBe(false);
    expect(guard.admit(socket("192.0.2.5"))).toBe(false);
    expect(guard.stats().refused.cap).toBe(2);
    expect(logged.length).toBe(1);
    nowMs = 10_000;
    expect(guard.admit(socket("192.0.2.6"))).toBe(false);
    expect(logged.length).toBe(2);
  });

  it("gives a busy connection back to the idle ones once its request is answered", () => {
    let nowMs = 0;
    const guard = connectionGuard({ cap: 100, perAddress: 1, staleMs: 2_000, nowMs: () => nowMs });
    const first = socket("198.51.100.7");
    guard.admit(first);
    guard.busy(first);
    nowMs = 10_000;
    expect(guard.admit(socket("198.51.100.7"))).toBe(false);
    guard.idle(first);
    nowMs = 12_000;
    expect(guard.admit(socket("198.51.100.7"))).toBe(true);
    expect(first.destroyed).toBe(true);
  });

  it("counts a client's connections under its key (an IPv6 /64) and none under a trusted proxy's share", () => {
    const guard = connectionGuard({ cap: 100, perAddress: 2 });
    expect(guard.admit(socket("2001:db8::1"), "2001:db8::/64")).toBe(true);
    expect(guard.admit(socket("2001:db8::2"), "2001:db8::/64")).toBe(true);
    expect(guard.admit(socket("2001:db8::3"), "2001:db8::/64")).toBe(false);

    const upstream = Array.from({ length: 10 }, () => socket("127.0.0.1"));
    for (const s of upstream) expect(guard.admit(s, null)).toBe(true);
    expect(upstream.some((s) => s.destroyed)).toBe(false);
  });

  it("forgets a closed connection", () => {
    const guard = connectionGuard({ cap: 100, perAddress: 1 });
    const first = socket("198.51.100.7");
    guard.admit(first);
    guard.busy(first);
    guard.closed(first);
    guard.idle(first);
    expect(guard.stats()).toMatchObject({ open: 0, addresses: 0 });
    expect(guard.admit(socket("198.51.100.7"))).toBe(true);
  });
});

describe("the cap a process can hold", () => {
  const limits = (soft: string) =>
    `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                 1048576              files\n`;

  it("reads the soft limit on open files", () => {
    expect(openFilesSoftLimit(limits("1024"))).toBe(1024);
    expect(openFilesSoftLimit(limits("unlimited"))).toBeNull();
    expect(openFilesSoftLimit(null)).toBeNull();
    expect(openFilesSoftLimit("nothing here")).toBeNull();
  });

  it("keeps descriptors back for the database and the logs", () => {
    expect(effectiveCap(1024, 1024)).toBe(1024 - RESERVED_DESCRIPTORS);
    expect(effectiveCap(1024, 1_048_576)).toBe(1024);
    expect(effectiveCap(1024, null)).toBe(1024);
  });
});
