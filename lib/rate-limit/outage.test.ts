import { describe, expect, it } from "vitest";
import { OutageLog, outageCause } from "./outage";

describe("outageCause", () => {
  it("tells database and disk failures from the errors a bug raises", () => {
    expect(outageCause(Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001" }))).toBe("database");
    expect(outageCause(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe(
      "database",
    );
    expect(outageCause(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }))).toBe("database");
    // Prisma's driver adapters carry the database's own code in meta.
    expect(
      outageCause({
        name: "PrismaClientKnownRequestError",
        message: "x",
        meta: { driverAdapterError: { cause: { originalCode: "53100" } } },
      }),
    ).toBe("disk");
    expect(outageCause(new Error('could not extend file "base/5/16385": No space left on device'))).toBe("disk");
    expect(outageCause(Object.assign(new Error("write failed"), { cause: Object.assign(new Error("nope"), { code: "ENOSPC" }) }))).toBe(
      "disk",
    );
    expect(
      outageCause(Object.assign(new Error("EMFILE: too many open files, open '/app/.next/server/chunk.js'"), { code: "EMFILE" })),
    ).toBe("resources");
    expect(
      outageCause(
        Object.assign(
          new Error("Transaction API error: Transaction already closed: A rollback cannot be executed on a committed transaction."),
          {
            code: "P2028",
          },
        ),
      ),
    ).toBe("database");
    expect(outageCause(new Error("Client has encountered a connection error and is not queryable"))).toBe("database");
    expect(outageCause(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeNull();
    expect(outageCause(Object.assign(new Error("Unique constraint failed"), { code: "P2002" }))).toBeNull();
    expect(outageCause(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBeNull();
  });
});

describe("OutageLog", () => {
  it("logs one line per episode, and the next episode after a quiet period with the last one's count", () => {
    const lines: Record<string, unknown>[] = [];
    const sink = {
      error: (entry: object) => lines.push({ level: "error", ...entry }),
      info: (entry: object) => lines.push({ level: "info", ...entry }),
    };
    let now = 0;
    const outages = new OutageLog(sink, () => now, 30_000);
    const down = Object.assign(new Error("Connection terminated unexpectedly\n    at stack"), { code: "ECONNRESET" });
    for (let i = 0; i < 250; i++) {
      now += 80;
      outages.failed("database", "/api/auth/callback/credentials", down);
    }
    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        event: "service_unavailable",
        cause: "database",
        code: "ECONNRESET",
        message: "Connection terminated unexpectedly",
      }),
    ]);
    now += 31_000;
    outages.failed("database", "/api/register", down);
    expect(lines.slice(1)).toEqual([
      expect.objectContaining({ level: "info", event: "service_unavailable_ended", refused: 250 }),
      expect.objectContaining({ level: "error", event: "service_unavailable", route: "/api/register" }),
    ]);
  });
});
