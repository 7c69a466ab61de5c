/**
 * Work a request starts and does not wait for (looking up an account and queueing its email):
 * the request's answer and timing then cannot depend on it. Each task is tracked, so tests and
 * shutdown can wait for them; a failure goes to `onError` and never reaches the request.
 */
export class Background {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly onError: (label: string, error: unknown) => void) {}

  run(label: string, work: () => Promise<void>): void {
    const task: Promise<void> = Promise.resolve()
      .then(work)
      .catch((error: unknown) => this.onError(label, error))
      .finally(() => this.running.delete(task));
    this.running.add(task);
  }

  /** Resolves once every task started so far, and any they started, has settled. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
