import { BulkheadRejectedError, bulkhead } from "cockatiel";

export class HashBudgetFull extends Error {
  constructor() {
    super("Too many password checks are running; try again shortly.");
  }
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
      return await this.bulkhead.execute(work);
    } catch (error) {
      if (error instanceof BulkheadRejectedError) throw new HashBudgetFull();
      throw error;
    }
  }
}
