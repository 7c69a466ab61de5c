import type { DriverAdapter } from "@/lib/db/client";
import type { Sql } from "@/lib/db/sql";

type Adapter = Awaited<ReturnType<DriverAdapter["connect"]>>;
type Transaction = Awaited<ReturnType<Adapter["startTransaction"]>>;
type Queryable = Pick<Adapter, "queryRaw" | "executeRaw">;

/**
 * Counts the statements sent to the database, Prisma's and the stores' own SQL (wrapSql), one per round trip, BEGIN and COMMIT
 * included: node-postgres's adapter sends BEGIN inside startTransaction and COMMIT as a statement
 * of the transaction; PGlite's driver runs both itself ("phantom" to Prisma).
 */
export class RoundTrips {
  count = 0;
  statements: string[] = [];

  wrap = (factory: DriverAdapter): DriverAdapter =>
    overriding(factory, {
      connect: async () => this.#adapter(await factory.connect()),
    });

  /** The statements the sign-in path's stores send without Prisma (lib/db/sql.ts), counted alike. */
  wrapSql = (sql: Sql): Sql => ({
    rows: (text, values) => {
      this.#note(text);
      return sql.rows(text, values);
    },
    run: (text, values) => {
      this.#note(text);
      return sql.run(text, values);
    },
  });

  /** Counts what `work` sends, and returns the count and the statements. */
  async during(work: () => Promise<unknown>): Promise<{ count: number; statements: string[] }> {
    this.count = 0;
    this.statements = [];
    await work();
    return { count: this.count, statements: [...this.statements] };
  }

  #note(sql: string): void {
    this.count += 1;
    this.statements.push(sql.replace(/\s+/g, " ").slice(0, 160));
  }

  #counted<T extends Queryable>(target: T): Pick<Queryable, "queryRaw" | "executeRaw"> {
    return {
      queryRaw: (query) => {
        this.#note(query.sql);
        return target.queryRaw(query);
      },
      executeRaw: (query) => {
        this.#note(query.sql);
        return target.executeRaw(query);
      },
    };
  }

  #adapter(adapter: Adapter): Adapter {
    return overriding(adapter, {
      ...this.#counted(adapter),
      startTransaction: async (isolationLevel?: Parameters<Adapter["startTransaction"]>[0]) => {
        const tx: Transaction = await adapter.startTransaction(isolationLevel);
        const phantom = tx.options.usePhantomQuery;
        // node-postgres's adapter sends its BEGIN before handing the transaction over, PGlite's driver runs its own.
        this.#note("BEGIN");
        return overriding(tx, {
          ...this.#counted(tx),
          commit: () => {
            if (phantom) this.#note("COMMIT (by the driver)");
            return tx.commit();
          },
          rollback: () => {
            if (phantom) this.#note("ROLLBACK (by the driver)");
            return tx.rollback();
          },
        });
      },
    });
  }
}

/** `target` with `overrides` in place of some members; every other member is the target's own, bound to it. */
function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}
