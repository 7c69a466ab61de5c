"use client";

import { useLocale, useT, type T } from "./Messages";
import type { AltchaWidgetElement } from "altcha/types/generic";
import type {} from "altcha/types/react";
import { useEffect, useImperativeHandle, useRef, useState, type Ref } from "react";

export type AltchaHandle = {
  /** The solved payload, solving first if the visitor submitted before it finished. */
  payload(): Promise<string>;
  /** A payload is spent by one submission; the next one needs a fresh challenge. */
  reset(): void;
};

const SOLVE_TIMEOUT_MS = 60_000;

/** The payload of the solve in progress, or "" if it fails, expires or takes too long. */
function nextVerification(element: AltchaWidgetElement): Promise<string> {
  return new Promise((resolve) => {
    const finish = (payload: string) => {
      clearTimeout(timer);
      element.removeEventListener("verified", onVerified);
      element.removeEventListener("statechange", onChange);
      resolve(payload);
    };
    const onVerified = (event: Event) => finish((event as CustomEvent<{ payload?: string }>).detail?.payload ?? "");
    const onChange = (event: Event) => {
      const state = (event as CustomEvent<{ state?: string }>).detail?.state;
      if (state === "error" || state === "expired" || state === "unverified") finish("");
    };
    const timer = setTimeout(() => finish(""), SOLVE_TIMEOUT_MS);
    element.addEventListener("verified", onVerified);
    element.addEventListener("statechange", onChange);
  });
}

/** How long a solve runs before the form says it is still checking: most finish well within it. */
const QUIET_SOLVE_MS = 1_500;

/**
 * The ALTCHA proof of work, with nothing to tick: the widget is invisible, starts solving as soon
 * as the form gets focus, and the submit waits for its solution. Its state is said in a live
 * region instead (visible only past QUIET_SOLVE_MS, or when the check failed).
 */
export function AltchaField({ ref }: { ref: Ref<AltchaHandle> }) {
  const t = useT();
  const locale = useLocale();
  const widget = useRef<AltchaWidgetElement | null>(null);
  const solved = useRef("");
  const [state, setState] = useState<string>("unverified");
  const [solvingSinceMs, setSolvingSinceMs] = useState<number | null>(null);
  const solvingMs = useSolvingMs(solvingSinceMs);
  // "Robot check done." only closes what was said before ("still checking", or a failure): a quick
  // solve at a form's first focus is no news, and announcing it interrupted the field's label.
  const [sayDone, setSayDone] = useState(false);
  const since = useRef<number | null>(null);
  const failed = useRef(false);

  useEffect(() => {
    // The widget is a browser-only custom element; loading it here keeps it out of server rendering.
    // A script that fails to load (offline, a blocked chunk) is said as a failed check.
    import("altcha")
      // The widget's own words (its label, footer and alerts) from our catalogue, in the page's language.
      .then(() => altchaGlobal().$altcha?.i18n.set(locale, altchaStrings(t)))
      .catch(() => setState("error"));
    const element = widget.current;
    if (!element) return;
    const onVerified = (event: Event) => {
      solved.current = (event as CustomEvent<{ payload?: string }>).detail?.payload ?? "";
    };
    const onChange = (event: Event) => {
      const state = (event as CustomEvent<{ state?: string }>).detail?.state;
      if (state !== "verified") solved.current = "";
      const nowMs = Date.now();
      if (state === "verified") setSayDone(failed.current || (since.current !== null && nowMs - since.current >= QUIET_SOLVE_MS));
      if (state === "verifying") since.current = nowMs;
      else if (state !== "verified") setSayDone(false);
      failed.current = state === "error" || (failed.current && state !== "verified");
      setState(state ?? "unverified");
      setSolvingSinceMs(state === "verifying" ? nowMs : null);
    };
    element.addEventListener("verified", onVerified);
    element.addEventListener("statechange", onChange);
    return () => {
      element.removeEventListener("verified", onVerified);
      element.removeEventListener("statechange", onChange);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once per page: a language change is a new page (the footer's form posts)
  }, []);

  useImperativeHandle(ref, () => ({
    async payload() {
      if (solved.current) return solved.current;
      const element = widget.current;
      if (!element) return "";
      // A submit right after the page loads can come before the widget's script has defined the
      // element: wait for it (bounded) rather than send no payload.
      if (!element.verify) {
        await Promise.race([customElements.whenDefined("altcha-widget"), new Promise((resolve) => setTimeout(resolve, SOLVE_TIMEOUT_MS))]);
      }
      if (!element.verify) return "";
      // Focus already started a solve: a second verify() would abort it and return null, so a
      // quick submit went out with no payload. Wait for the running one instead.
      if (element.getState?.() === "verifying") return nextVerification(element);
      const result = await element.verify();
      return result?.payload ?? solved.current;
    },
    reset() {
      solved.current = "";
      widget.current?.reset?.();
    },
  }));

  // The check grows harder while the server is under attack: past the quiet time, say it is still
  // working. A screen reader hears the same sentences (and that it finished), nobody sees a box.
  const slow = solvingMs >= QUIET_SOLVE_MS;
  const visible = state === "verifying" && slow ? t("forms.stillChecking") : state === "error" ? t("forms.checkFailed") : "";
  const spoken = visible || (state === "verified" && sayDone ? t("forms.checkDone") : "");
  return (
    <div className="altcha-field">
      <altcha-widget
        ref={widget as Ref<HTMLElement>}
        challenge="/api/altcha/challenge"
        name="altcha"
        auto="onfocus"
        display="invisible"
        language={locale}
      />
      <p className={visible ? "hint" : "sr-only"} role="status" data-testid="altcha-progress" data-state={state}>
        {spoken}
      </p>
    </div>
  );
}

const ALTCHA_STRINGS = [
  "ariaLinkLabel",
  "cancel",
  "enterCode",
  "enterCodeAria",
  "enterCodeFromImage",
  "error",
  "expired",
  "footer",
  "getAudioChallenge",
  "label",
  "loading",
  "reload",
  "verify",
  "verificationRequired",
  "verified",
  "verifying",
  "waitAlert",
] as const;

function altchaStrings(t: T): Record<string, string> {
  return Object.fromEntries(ALTCHA_STRINGS.map((key) => [key, t(`forms.altcha.${key}`)]));
}

/** The widget's registry of languages (altcha puts it on globalThis when its module loads). */
function altchaGlobal(): { $altcha?: { i18n: { set(language: string, strings: Record<string, string>): void } } } {
  return globalThis as never;
}

/** Milliseconds since the solve started: 0, then QUIET_SOLVE_MS once it has run that long. */
function useSolvingMs(sinceMs: number | null): number {
  const [elapsedMs, setElapsedMs] = useState(0);
  useEffect(() => {
    if (sinceMs === null) return;
    const timer = setTimeout(() => setElapsedMs(Date.now() - sinceMs), Math.max(0, sinceMs + QUIET_SOLVE_MS - Date.now()));
    return () => {
      clearTimeout(timer);
      setElapsedMs(0);
    };
  }, [sinceMs]);
  return sinceMs === null ? 0 : elapsedMs;
}
