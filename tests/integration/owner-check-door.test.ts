import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { createGatehouse, type Gatehouse } from "@/lib/gatehouse";
import type { DoorPass } from "@/lib/http/door";
import type { Lane } from "@/lib/password/hash-budget";
import { freshPglite, type TestDatabase } from "@/tests/helpers/databases";
import { testConfig } from "@/tests/helpers/instance";

const noCookie = { get: () => null };
/** A request with no device cookie at the door. */
const strangerAt = (instance: Gatehouse) => instance.door!.enter("GET", "/sign-in", noCookie, () => new AbortController().signal);

describe("the door while a password check runs (composition root)", () => {
  let database: TestDatabase | undefined;
  let gate: Gatehouse | undefined;
  afterEach(async () => {
    await gate?.close();
    await database?.dispose();
  });

  /** The composition root on a quiet event loop with the whole burst saved: only a check can make a stranger wait. */
  async function quietGate(): Promise<Gatehouse> {
    database = await freshPglite();
    const config = testConfig({ DATABASE_URL: database.url });
    gate = await createGatehouse(config, await openDatabase(config.database.target), { utilisation: () => 0 });
    return gate;
  }

  /** A password check in `lane` that runs until `finish` is called. */
  function runningCheck(instance: Gatehouse, lane: Lane) {
    let finish!: () => void;
    const check = instance.hashBudget.run(
      () => new Promise<void>((resolve) => (finish = resolve)),
      () => "full" as const,
      lane,
    );
    return { check, finish: () => finish() };
  }

  async function strangerWhileChecking(lane: Lane): Promise<DoorPass | "waiting"> {
    const instance = await quietGate();
    // A stranger let in just before: the floor (one each 100 ms) counts from here, not from the
    // door's start, so a slow machine cannot open it during the check below.
    expect(await strangerAt(instance)).toMatchObject({ kind: "in" });
    const { check, finish } = runningCheck(instance, lane);
    let entered: DoorPass | "waiting" = "waiting";
    void strangerAt(instance).then((pass) => (entered = pass));
    // An open door answers within the call; one turn of the loop is enough to see it.
    await new Promise((resolve) => setImmediate(resolve));
    const during = entered;
    finish();
    await check;
    // Once the check ends, the stranger goes in at the door's next window.
    await expect.poll(() => entered, { timeout: 2_000, interval: 10 }).toMatchObject({ kind: "in" });
    return during;
  }

  it("holds a stranger while a known device's check runs (the trusted lane)", { timeout: 60_000 }, async () => {
    expect(await strangerWhileChecking("trusted")).toBe("waiting");
  });

  it(
    "lets strangers in past a hold that never ends (an attacker's accounts' checks back to back) once its credit is spent",
    { timeout: 60_000 },
    async () => {
      const instance = await quietGate();
      // One check that never ends stands for trusted checks with no gap between them.
      const { check, finish } = runningCheck(instance, "trusted");
      let entered = 0;
      for (let n = 0; n < 40; n++) void strangerAt(instance).then(() => entered++);
      // Held at the floor (one each 100 ms), 40 strangers would take 4 s; once the hold has spent its
      // credit (about 133 ms), the quiet loop lets them in two a window, three windows of four.
      await expect.poll(() => entered, { timeout: 2_000, interval: 20 }).toBe(40);
      finish();
      await check;
    },
  );

  it(
    "does not hold strangers for a stranger's own check: the attack cannot shut the door with its guesses",
    { timeout: 60_000 },
    async () => {
      expect(await strangerWhileChecking("untrusted")).toMatchObject({ kind: "in" });
    },
  );
});
