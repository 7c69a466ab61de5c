"use client";

import { useHydrated } from "./hydrated";

/** "2026-11-30 10:42 UTC": what the server can say, not knowing the viewer's time zone. */
function utcText(date: Date, show: "date" | "datetime"): string {
  const iso = date.toISOString();
  return show === "date" ? iso.slice(0, 10) : `${iso.slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * A moment in the viewer's own time zone and language, in a <time> element. The server renders
 * UTC (it cannot know the zone), and the browser replaces it once hydrated; without JavaScript the
 * UTC text stays, and says so.
 */
export function LocalTime({ iso, show = "datetime" }: { iso: string; show?: "date" | "datetime" }) {
  const local = useHydrated();
  const date = new Date(iso);
  const text = local
    ? date.toLocaleString([], show === "date" ? { dateStyle: "medium" } : { dateStyle: "medium", timeStyle: "short" })
    : utcText(date, show);
  return <time dateTime={iso}>{text}</time>;
}
