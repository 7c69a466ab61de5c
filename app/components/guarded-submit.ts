"use client";

import { useState, type FormEvent, type RefObject } from "react";
import { secondsLeft } from "@/lib/ui/refusal-banner";
import type { AltchaHandle } from "./AltchaField";
import { handled } from "./handled";
import { localRefusal, useRefusalClock, type Refusal } from "./RefusalBanner";

/**
 * What a sent form does next:
 * - `"retry"` (or nothing): the form stays for another attempt; a fresh proof of work, the button ready;
 * - `"done"`: the form gave way to what follows (a second step, "check your email", a refreshed
 *   page): the button is ready, and the spent proof of work is not redone for nobody;
 * - `"leaving"`: the browser navigates away; the button stays pending until it has.
 */
export type AfterSubmit = "retry" | "done" | "leaving" | void;

/** The request a form sends once its own checks passed. */
export type Send = () => Promise<AfterSubmit>;

export type GuardedSubmit = {
  pending: boolean;
  /** Pending, or a refusal's wait still running: the button says aria-disabled and a submit does nothing. */
  blocked: boolean;
  refusal: Refusal | null;
  setRefusal: (refusal: Refusal | null) => void;
  /** The refusal banner's clock. */
  nowMs: number;
  /**
   * Handles the form's submit event: `onSubmit={(event) => submit.handle(event, check)}`. `check`
   * reads the form and shows its own errors; it returns the request to send, or nothing when the
   * form stops there.
   */
  handle: (event: FormEvent<HTMLFormElement>, check: (form: HTMLFormElement) => Send | undefined) => void;
};

/**
 * The submit state machine every form shares: one attempt at a time, none while a refusal's wait
 * lasts, the last refusal cleared by the next try, a network failure said as `unavailable` (in the
 * form's own words), and each proof of work spent once. The button is never `disabled` (focus
 * would fall to <body>): `blocked` is for its aria-disabled.
 */
export function useGuardedSubmit(unavailable: string, altcha?: RefObject<AltchaHandle | null>): GuardedSubmit {
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const nowMs = useRefusalClock(refusal);
  const blocked = pending || secondsLeft(refusal, nowMs) > 0;

  async function run(send: Send) {
    setPending(true);
    let after: AfterSubmit = "retry";
    try {
      after = await send();
    } catch {
      setRefusal(localRefusal("unavailable", unavailable));
    }
    if (after === "leaving") return;
    // Each solution is accepted once: the next attempt needs a fresh one.
    if (after !== "done") altcha?.current?.reset();
    setPending(false);
  }

  return {
    pending,
    blocked,
    refusal,
    setRefusal,
    nowMs,
    handle(event, check) {
      event.preventDefault();
      if (blocked) return;
      // Batched with the form's own flushSync, so the banner goes in the same render as errors appear.
      setRefusal(null);
      const send = check(event.currentTarget);
      if (send) handled(run(send));
    },
  };
}
