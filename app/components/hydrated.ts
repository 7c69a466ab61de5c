"use client";

import { useSyncExternalStore } from "react";

function noSubscription(): () => void {
  return () => {};
}

/**
 * False in the server's HTML and during hydration, true once React runs in the browser. Until
 * then a form is the browser's (it posts to its no-script action) and times are the server's UTC.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}
