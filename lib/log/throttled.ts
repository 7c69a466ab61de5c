/** Calls `fn` at most once per `intervalMs`: an outage must not turn every request into a log line. */
export function throttled<T>(intervalMs: number, fn: (value: T) => void): (value: T) => void {
  let lastMs = -Infinity;
  return (value) => {
    const nowMs = Date.now();
    if (nowMs - lastMs < intervalMs) return;
    lastMs = nowMs;
    fn(value);
  };
}
