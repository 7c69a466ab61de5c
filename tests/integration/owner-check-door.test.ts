import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { createGatehouse, type Gatehouse } from "@/lib/gatehouse";
import type { DoorPass } from "@/lib/http/door";
import type { Lane } from "@/lib/password/hash-budget";
import { freshPglite, type TestDatabase } from "@/tests/helpers/databases";
import { testConfig } from "@/tests/helpers/instance";

const noCookie = { get: () => null };

describe("the door while a password check runs (composition root)", () => {
  let database: TestDatabase | undefined;
  let gate: Gatehouse | undefined;
  afterEach(async () => {
    await gate?.close();
    await database?.dispose();
  });

  async function strangerWhileChecking(lane: Lane): Promise<DoorPass | "waiting"> {
    database = await freshPglite();
    const config = testConfig({ DATABASE_URL: database.url });
    // A quiet event loop and the whole burst saved: only the check can make a stranger wait.
    gate = await createGatehouse(config, await openDatabase(config.database.target), { utilisation: () => 0 });
    // A stranger let in just before: the floor (one each 100 ms) counts from here, not from the
    // door's start, so a slow machine cannot open it during the check below.
    expect(await gate.door!.enter("GET", "/sign-in", noCookie, new AbortController().signal)).toMatchObject({ kind: "in" });
    let finish!: () => void;
    const check = gate.hashBudget.run(
      () => new Promise<void>((resolve) => (finish = resolve)),
      () => "full" as const,
      lane,
    );
    let entered: DoorPass | "waiting" = "waiting";
    void gate.door!.enter("GET", "/sign-in", noCookie, new AbortController().signal).then((pass) => (entered = pass));
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
    "lets strangers in past a hold that never ends (an attacker's accounts' checks back to back) after its share of the second",
    { timeout: 60_000 },
    async () => {
      database = await freshPglite();
      const config = testConfig({ DATABASE_URL: database.url });
      gate = await createGatehouse(config, await openDatabase(config.database.target), { utilisation: () => 0 });
      // One check that never ends stands for trusted checks with no gap between them.
      let finish!: () => void;
      const check = gate.hashBudget.run(
        () => new Promise<void>((resolve) => (finish = resolve)),
        () => "full" as const,
        "trusted",
      );
      let entered = 0;
      for (let n = 0; n < 40; n++) void gate.door!.enter("GET", "/sign-in", noCookie, new AbortController().signal).then(() => entered++);
      // Held at the floor (one each 100 ms), 40 strangers would take 4 s; once the hold has had its
      // quarter of the second, the quiet loop lets them in two a window.
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
