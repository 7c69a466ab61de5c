import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveDatabaseTarget } from "./target";

describe("resolveDatabaseTarget", () => {
  it("defaults to embedded PGlite in .data/pglite", () => {
    expect(resolveDatabaseTarget(undefined, "/srv/app")).toEqual({ kind: "pglite", dataDir: "/srv/app/.data/pglite" });
    expect(resolveDatabaseTarget("  ", "/srv/app")).toEqual({ kind: "pglite", dataDir: "/srv/app/.data/pglite" });
  });

  it("takes a pglite: folder, relative or absolute", () => {
    expect(resolveDatabaseTarget("pglite:db", "/srv/app")).toEqual({ kind: "pglite", dataDir: path.resolve("/srv/app/db") });
    expect(resolveDatabaseTarget("pglite:/var/lib/gh", "/srv/app")).toEqual({ kind: "pglite", dataDir: "/var/lib/gh" });
  });

  it("takes postgres:// and postgresql:// URLs", () => {
    expect(resolveDatabaseTarget("postgres://u@127.0.0.1:5432/test")).toEqual({
      kind: "postgres",
      url: "postgres://u@127.0.0.1:5432/test",
    });
    expect(resolveDatabaseTarget("postgresql://h/db").kind).toBe("postgres");
  });

  it("refuses anything else, naming the variable", () => {
    expect(() => resolveDatabaseTarget("mysql://h/db")).toThrow(/DATABASE_URL/);
    expect(() => resolveDatabaseTarget("pglite:")).toThrow(/DATABASE_URL/);
  });
});
