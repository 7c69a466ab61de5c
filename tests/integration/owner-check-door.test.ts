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
    let finish!: () => void;
    const check = gate.hashBudget.run(
      () => new Promise<void>((resolve) => (finish = resolve)),
      () => "full" as const,
      lane,
    );
    let entered: DoorPass | "waiting" = "waiting";
    void gate.door!.enter("GET", "/sign-in", noCookie, new AbortController().signal).then((pass) => (entered = pass));
    await new Promise((resolve) => setTimeout(resolve, 30));
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
    "does not hold strangers for a stranger's own check: the attack cannot shut the door with its guesses",
    { timeout: 60_000 },
    async () => {
      expect(await strangerWhileChecking("untrusted")).toMatchObject({ kind: "in" });
    },
  );
});
