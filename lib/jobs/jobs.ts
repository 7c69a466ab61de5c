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

/**
 * Housekeeping every `intervalMs` (and once after `firstAfterMs`, if given): a run slower than
 * the interval is not stacked with another, a failure goes to `onError` and the next run tries
 * again, and the timers never keep the process alive. stop() clears them and waits for a run in
 * progress.
 */
export function startPeriodic(
  run: () => Promise<void>,
  options: { intervalMs: number; firstAfterMs?: number; onError: (error: unknown) => void },
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= run()
      .catch(options.onError)
      .finally(() => {
        running = undefined;
      });
  };
  const interval = setInterval(tick, options.intervalMs);
  const first = options.firstAfterMs === undefined ? undefined : setTimeout(tick, options.firstAfterMs);
  interval.unref();
  first?.unref();
  return {
    async stop() {
      clearInterval(interval);
      if (first) clearTimeout(first);
      await running;
    },
  };
}
