"use client";

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

/** The ALTCHA proof-of-work widget: it starts solving as soon as the form gets focus. */
export function AltchaField({ ref }: { ref: Ref<AltchaHandle> }) {
  const widget = useRef<AltchaWidgetElement | null>(null);
  const solved = useRef("");
  const [solvingSinceMs, setSolvingSinceMs] = useState<number | null>(null);
  const solvingSeconds = useSolvingSeconds(solvingSinceMs);

  useEffect(() => {
    // The widget is a browser-only custom element; loading it here keeps it out of server rendering.
    void import("altcha");
    const element = widget.current;
    if (!element) return;
    const onVerified = (event: Event) => {
      solved.current = (event as CustomEvent<{ payload?: string }>).detail?.payload ?? "";
    };
    const onChange = (event: Event) => {
      const state = (event as CustomEvent<{ state?: string }>).detail?.state;
      if (state !== "verified") solved.current = "";
      setSolvingSinceMs(state === "verifying" ? Date.now() : null);
    };
    element.addEventListener("verified", onVerified);
    element.addEventListener("statechange", onChange);
    // The widget marks its checkbox `required`, so browsers expose it as invalid before anyone has
    // touched it. The form never relies on that (noValidate; it solves on submit), so say so.
    const notInvalid = () => {
      for (const box of element.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')) {
        if (box.getAttribute("aria-invalid") !== "false") box.setAttribute("aria-invalid", "false");
      }
    };
    const observer = new MutationObserver(notInvalid);
    observer.observe(element, { childList: true, subtree: true, attributes: true, attributeFilter: ["required", "aria-invalid"] });
    notInvalid();
    return () => {
      observer.disconnect();
      element.removeEventListener("verified", onVerified);
      element.removeEventListener("statechange", onChange);
    };
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

  return (
    <div className="altcha-field">
      <altcha-widget ref={widget as Ref<HTMLElement>} challenge="/api/altcha/challenge" name="altcha" auto="onfocus" />
      {/* The check grows harder while the server is under attack: say it is still working. */}
      <p className="hint" aria-live="polite" data-testid="altcha-progress">
        {solvingSeconds >= 2
          ? `Still checking that you are not a robot (${solvingSeconds} s). This takes longer while the site is busy.`
          : ""}
      </p>
    </div>
  );
}

/** Whole seconds since the solve started, ticking while it runs. */
function useSolvingSeconds(sinceMs: number | null): number {
  const [nowMs, setNowMs] = useState(0);
  useEffect(() => {
    if (sinceMs === null) return;
    const tick = () => setNowMs(Date.now());
    tick();
    const timer = setInterval(tick, 1_000);
    return () => clearInterval(timer);
  }, [sinceMs]);
  return sinceMs === null ? 0 : Math.max(0, Math.floor((nowMs - sinceMs) / 1000));
}
