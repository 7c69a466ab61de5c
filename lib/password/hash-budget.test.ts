import { AsyncLocalStorage } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import { HashBudget, HashBudgetFull, isHashBudgetFull } from "./hash-budget";

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("HashBudget", () => {
  it("runs K at once, queues Q, and refuses the rest at once", async () => {
    const budget = new HashBudget(2, 1);
    const g = gate();
    const running = [budget.run(() => g.opened), budget.run(() => g.opened), budget.run(() => g.opened)];
    expect(budget.executing).toBe(2);
    expect(budget.queued).toBe(1);
    await expect(budget.run(async () => "never")).rejects.toBeInstanceOf(HashBudgetFull);
    g.open();
    await Promise.all(running);
    expect(await budget.run(async () => "ok")).toBe("ok");
  });

  it("passes other errors through", async () => {
    const budget = new HashBudget(1, 0);
    await expect(budget.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
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
        }),
      );
    const all = [run("first", g.opened), run("second"), run("third")];
    g.open();
    await Promise.all(all);
    expect(seen).toEqual(["first", "second", "third"]);
  });
});

describe("isHashBudgetFull", () => {
  it("recognises the refusal by its registry symbol, even from another bundle's copy of the class", () => {
    const fromAnotherBundle = Object.assign(new Error("full"), { [Symbol.for("gatehouse.hashBudgetFull")]: true });
    expect(isHashBudgetFull(fromAnotherBundle)).toBe(true);
    expect(isHashBudgetFull(new HashBudgetFull())).toBe(true);
    expect(isHashBudgetFull(new Error("other"))).toBe(false);
    expect(isHashBudgetFull(undefined)).toBe(false);
  });
});
