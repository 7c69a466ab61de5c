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
