import type { Translate } from "@/lib/i18n/i18n";

/**
 * Durations in plain words for the banners, in the page's language (the `duration` catalogue;
 * numbers and plurals through Intl): exact ones count down ("2 min 49 s"), rounded ones say so
 * ("about 5 minutes"). Pure, so the wording is tested without a browser.
 */

/** "49 s", "2 min 49 s", "3 min", "1 h 5 min": whole seconds, largest unit first, never "0 min". */
export function formatDuration(totalSeconds: number, t: Translate): string {
  const seconds = Math.max(0, Math.ceil(totalSeconds));
  if (seconds < 60) return t("duration.seconds", { seconds });
  if (seconds < 3600) {
    const minutes = Math.floor(seconds / 60);
    const rest = seconds % 60;
    return rest === 0 ? t("duration.minutes", { minutes }) : t("duration.minutesSeconds", { minutes, seconds: rest });
  }
  // Past an hour the seconds are noise: round up to the minute, so the wait is never understated.
  const minutes = Math.ceil(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? t("duration.hours", { hours }) : t("duration.hoursMinutes", { hours, minutes: rest });
}

/** "about a minute", "about 5 minutes", "about an hour", "about 2 hours": for waits the server rounded. */
export function aboutDuration(ms: number, t: Translate): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return t("duration.aboutMinutes", { minutes });
  return t("duration.aboutHours", { hours: Math.round(minutes / 60) });
}
