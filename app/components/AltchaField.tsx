"use client";

import type { AltchaWidgetElement } from "altcha/types/generic";
import type {} from "altcha/types/react";
import { useEffect, useImperativeHandle, useRef, type Ref } from "react";

export type AltchaHandle = {
  /** The solved payload, solving first if the visitor submitted before it finished. */
  payload(): Promise<string>;
  /** A payload is spent by one submission; the next one needs a fresh challenge. */
  reset(): void;
};

/** The ALTCHA proof-of-work widget: it starts solving as soon as the form gets focus. */
export function AltchaField({ ref }: { ref: Ref<AltchaHandle> }) {
  const widget = useRef<AltchaWidgetElement | null>(null);
  const solved = useRef("");

  useEffect(() => {
    // The widget is a browser-only custom element; loading it here keeps it out of server rendering.
    void import("altcha");
    const element = widget.current;
    if (!element) return;
    const onVerified = (event: Event) => {
      solved.current = (event as CustomEvent<{ payload?: string }>).detail?.payload ?? "";
    };
    const onChange = (event: Event) => {
      if ((event as CustomEvent<{ state?: string }>).detail?.state !== "verified") solved.current = "";
    };
    element.addEventListener("verified", onVerified);
    element.addEventListener("statechange", onChange);
    return () => {
      element.removeEventListener("verified", onVerified);
      element.removeEventListener("statechange", onChange);
    };
  }, []);

  useImperativeHandle(ref, () => ({
    async payload() {
      if (solved.current) return solved.current;
      const element = widget.current;
      if (!element?.verify) return "";
      const result = await element.verify();
      return result?.payload ?? "";
    },
    reset() {
      solved.current = "";
      widget.current?.reset?.();
    },
  }));

  return <altcha-widget ref={widget as Ref<HTMLElement>} challenge="/api/altcha/challenge" name="altcha" auto="onfocus" />;
}
