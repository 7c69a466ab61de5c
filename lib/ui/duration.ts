/**
 * Durations in plain words for the banners: exact ones count down ("2 min 49 s"), rounded ones
 * say so ("about 5 minutes"). Pure, so the wording is tested without a browser.
 */

/** "49 s", "2 min 49 s", "3 min", "1 h 5 min": whole seconds, largest unit first, never "0 min". */
export function formatDuration(totalSeconds: number): string {
  const seconds = Math.max(0, Math.ceil(totalSeconds));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) {
    const minutes = Math.floor(seconds / 60);
    const rest = seconds % 60;
    return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
  }
  // Past an hour the seconds are noise: round up to the minute, so the wait is never understated.
  const minutes = Math.ceil(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/** "about a minute", "about 5 minutes", "about an hour", "about 2 hours": for waits the server rounded. */
export function aboutDuration(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes === 1) return "about a minute";
  if (minutes < 60) return `about ${minutes} minutes`;
  const hours = Math.round(minutes / 60);
  return hours === 1 ? "about an hour" : `about ${hours} hours`;
}
