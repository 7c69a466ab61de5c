"use client";

import { useHydrated } from "../components/hydrated";
import { useRich, useT } from "../components/Messages";

type Show = "date" | "datetime";

/**
 * The account page's moments, through its catalogue, in the page's language: in the viewer's own
 * zone once the page runs in their browser; in the server's HTML (and without JavaScript) in UTC,
 * which the text then names.
 */
export function useMoment(): (iso: string, show?: Show) => string {
  const t = useT();
  const local = useHydrated();
  return (iso, show = "datetime") => t(`account.time.${show === "date" ? "day" : "moment"}${local ? "" : "Utc"}`, { when: new Date(iso) });
}

/** A moment in a <time> element. */
export function AccountTime({ iso, show }: { iso: string; show?: Show }) {
  const moment = useMoment();
  return <time dateTime={iso}>{moment(iso, show)}</time>;
}

/** "Sign-in from new devices is paused … until about <time>": the time is the viewer's, as above. */
export function PausedUntil({ iso }: { iso: string }) {
  const moment = useMoment();
  const rich = useRich();
  return <>{rich("account.time.pausedUntil", { time: moment(iso) }, { clock: (chunks) => <time dateTime={iso}>{chunks}</time> })}</>;
}
