import { AsyncLocalStorage } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import { HashBudget } from "./hash-budget";

const FULL = "full";
const full = () => FULL;

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("HashBudget", () => {
  it("runs K at once, queues Q, and refuses the rest at once", async () => {
    const budget = new HashBudget(2, 1);
    const g = gate();
    const running = [budget.run(() => g.opened, full), budget.run(() => g.opened, full), budget.run(() => g.opened, full)];
    expect(budget.executing).toBe(2);
    expect(budget.queued).toBe(1);
    expect(await budget.run(async () => "never", full)).toBe(FULL);
    g.open();
    await Promise.all(running);
    expect(await budget.run(async () => "ok", full)).toBe("ok");
  });

  it("passes other errors through", async () => {
    const budget = new HashBudget(1, 0);
    await expect(budget.run(async () => Promise.reject(new Error("boom")), full)).rejects.toThrow("boom");
  });
});

describe("HashBudget lanes", () => {
  it("keeps the reserved slot for known devices: a flood of untrusted work is refused, the trusted sign-in runs", async () => {
    const budget = new HashBudget(2, 3, 1);
    const g = gate();
    const flood = Array.from({ length: 4 }, () => budget.run(() => g.opened, full, "untrusted"));
    // One untrusted running, three queued: the second slot is the trusted lane's.
    expect(budget.executing).toBe(1);
    expect(budget.queued).toBe(3);
    expect(await budget.run(async () => "never", full, "untrusted")).toBe(FULL);
    expect(await budget.run(async () => "owner", full, "trusted")).toBe("owner");
    g.open();
    await Promise.all(flood);
  });

  it("starts queued trusted work before queued untrusted work, whatever the arrival order", async () => {
    const budget = new HashBudget(1, 5);
    const g = gate();
    const order: string[] = [];
    const first = budget.run(() => g.opened, full, "untrusted");
    const queued = [
      budget.run(async () => void order.push("untrusted 1"), full, "untrusted"),
      budget.run(async () => void order.push("untrusted 2"), full, "untrusted"),
      budget.run(async () => void order.push("trusted"), full, "trusted"),
    ];
    g.open();
    await Promise.all([first, ...queued]);
    expect(order).toEqual(["trusted", "untrusted 1", "untrusted 2"]);
  });

  it("lets trusted work use every slot, and refuses a reservation that leaves untrusted work none", async () => {
    const budget = new HashBudget(2, 0, 1);
    const g = gate();
    const both = [budget.run(() => g.opened, full, "trusted"), budget.run(() => g.opened, full, "trusted")];
    expect(budget.executing).toBe(2);
    g.open();
    await Promise.all(both);
    expect(() => new HashBudget(2, 0, 2)).toThrow(RangeError);
  });

  it("reports recent pressure from the last seconds, on an injected clock", async () => {
    let nowMs = 0;
    const budget = new HashBudget(1, 1, 0, () => nowMs);
    expect(budget.recentPressure()).toBe(0);
    const g = gate();
    const runs = [budget.run(() => g.opened, full), budget.run(() => g.opened, full)];
    expect(await budget.run(async () => "never", full)).toBe(FULL);
    expect(budget.recentPressure()).toBe(1);
    g.open();
    await Promise.all(runs);
    nowMs = 9_000;
    expect(budget.recentPressure()).toBe(1);
    nowMs = 10_000;
    expect(budget.recentPressure()).toBe(0);
  });
});

describe("HashBudget async context", () => {
  it("runs queued work in its own caller's async context, not in the one that freed the slot", async () => {
    const requestContext = new AsyncLocalStorage<string>();
    const budget = new HashBudget(1, 2);
    const g = gate();
    const seen: string[] = [];
    const run = (id: string, wait?: Promise<void>) =>
      requestContext.run(id, () =>
        budget.run(async () => {
          if (wait) await wait;
          seen.push(requestContext.getStore()!);
        }, full),
      );
    const all = [run("first", g.opened), run("second"), run("third")];
    g.open();
    await Promise.all(all);
    expect(seen).toEqual(["first", "second", "third"]);
  });
});

describe("A full HashBudget", () => {
  // Nothing is thrown, so no other bundle's catch has to recognise an error class to answer 503.
  it("answers whenFull() without running the work and without throwing", async () => {
    const budget = new HashBudget(1, 0);
    const g = gate();
    const running = budget.run(() => g.opened, full);
    let ran = false;
    const refused = budget.run(async () => {
      ran = true;
      return "never";
    }, full);
    await expect(refused).resolves.toBe(FULL);
    expect(ran).toBe(false);
    g.open();
    await running;
  });
});
