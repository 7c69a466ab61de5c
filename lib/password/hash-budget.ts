import { AsyncResource } from "node:async_hooks";
import { BulkheadRejectedError, bulkhead } from "cockatiel";

const HASH_BUDGET_FULL = Symbol.for("gatehouse.hashBudgetFull");

export class HashBudgetFull extends Error {
  readonly [HASH_BUDGET_FULL] = true;

  constructor() {
    super("Too many password checks are running; try again shortly.");
  }
}

/**
 * Next.js bundles a module once per entry point, so the budget built at start (instrumentation)
 * throws a HashBudgetFull class that `instanceof` in a route's bundle does not recognise: the
 * refusal became a 500. A registry symbol is the same in every bundle.
 */
export function isHashBudgetFull(error: unknown): error is HashBudgetFull {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[HASH_BUDGET_FULL] === true;
}

/**
 * At most `concurrency` Argon2id operations at once (each holds 19 MiB and a core) and a short
 * queue behind them. Past that, callers fail fast with HashBudgetFull (a 503) instead of
 * waiting in a line that grows without bound under a flood.
 */
export class HashBudget {
  private readonly bulkhead;

  constructor(
    readonly concurrency: number,
    readonly queue: number,
  ) {
    this.bulkhead = bulkhead(concurrency, queue);
  }

  get executing(): number {
    return this.concurrency - this.bulkhead.executionSlots;
  }

  get queued(): number {
    return this.queue - this.bulkhead.queueSlots;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      // A queued task is started by whichever request frees a slot, in that request's async
      // context; binding keeps it in its own, where next-auth reads cookies() and headers().
      return await this.bulkhead.execute(AsyncResource.bind(work));
    } catch (error) {
      if (error instanceof BulkheadRejectedError) throw new HashBudgetFull();
      throw error;
    }
  }
}
