import { describe, expect, it } from "vitest";
import { Background } from "./jobs";

describe("Background", () => {
  it("returns before the work runs, and idle() waits for it and for what it starts", async () => {
    const done: string[] = [];
    const background = new Background(() => {});
    background.run("outer", async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      done.push("outer");
      background.run("inner", async () => void done.push("inner"));
    });
    expect(done).toEqual([]);
    await background.idle();
    expect(done).toEqual(["outer", "inner"]);
  });

  it("reports a failure with its label and keeps running other work", async () => {
    const failures: [string, unknown][] = [];
    const background = new Background((label, error) => failures.push([label, error]));
    let ran = false;
    background.run("bad", async () => {
      throw new Error("boom");
    });
    background.run("good", async () => void (ran = true));
    await background.idle();
    expect(ran).toBe(true);
    expect(failures).toHaveLength(1);
    expect(failures[0]![0]).toBe("bad");
  });
});
