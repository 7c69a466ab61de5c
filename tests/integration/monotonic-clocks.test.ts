import { afterEach, describe, expect, it, vi } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { createGatehouse, type Gatehouse } from "@/lib/gatehouse";
import type { DoorPass } from "@/lib/http/door";
import { freshPglite, type TestDatabase } from "@/tests/helpers/databases";
import { testConfig } from "@/tests/helpers/instance";

const noCookie = { get: () => null };

describe("the clocks the composition root gives what measures intervals", () => {
  let database: TestDatabase | undefined;
  let gate: Gatehouse | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await gate?.close();
    await database?.dispose();
  });

  it("keeps letting strangers in on a quiet loop when the wall clock steps back", { timeout: 60_000 }, async () => {
    database = await freshPglite();
    // A wall clock the test can step, running on with real time; the root takes it as Date.now.
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const config = testConfig({ DATABASE_URL: database.url });
    // A quiet event loop: the door's only reason to hold a stranger is its allowance.
    gate = await createGatehouse(config, await openDatabase(config.database.target), { utilisation: () => 0 });
    const door = gate.door!;
    const enter = () => door.enter("GET", "/sign-in", noCookie, () => new AbortController().signal);

    // The burst, spent in one turn of the loop: the next stranger waits for the allowance to refill.
    const burst = await Promise.all(Array.from({ length: 20 }, enter));
    expect(burst.map((pass) => pass.kind)).toEqual(Array.from({ length: 20 }, () => "in"));

    // An NTP step, a restored snapshot or a hand-set date: the wall clock goes back a minute.
    vi.setSystemTime(Date.now() - 60_000);
    let entered: DoorPass | "waiting" = "waiting";
    void enter().then((pass) => (entered = pass));
    await vi.waitFor(() => expect(entered).toMatchObject({ kind: "in" }), { timeout: 2_000, interval: 20 });
  });
  it("lets the hash budget's pressure fade on time when the wall clock steps back", { timeout: 60_000 }, async () => {
    database = await freshPglite();
    // Both clocks faked and running on: the test moves them forward together, then steps the wall clock back.
    vi.useFakeTimers({ toFake: ["Date", "performance"], shouldAdvanceTime: true });
    const config = testConfig({ DATABASE_URL: database.url, HASH_CONCURRENCY: "1", HASH_QUEUE: "0" });
    gate = await createGatehouse(config, await openDatabase(config.database.target));
    const budget = gate.hashBudget;

    // One hash running and one refused: the budget was full this second.
    let finish!: () => void;
    const running = budget.run(
      () => new Promise<void>((resolve) => (finish = resolve)),
      () => "full" as const,
    );
    expect(
      await budget.run(
        async () => "ran" as const,
        () => "full" as const,
      ),
    ).toBe("full");
    finish();
    await running;
    expect(budget.recentPressure()).toBe(1);

    // The window passes; then the wall clock goes back a minute (an NTP step, a restored snapshot).
    vi.advanceTimersByTime(11_000);
    vi.setSystemTime(Date.now() - 60_000);
    // On the wall clock the old peak would sit in the "future" for the step's length, and every
    // stranger's proof of work would stay at the budget's hardest level meanwhile.
    expect(budget.recentPressure()).toBe(0);
  });
});
