"use client";

import { useEffect, type FormEvent, type RefObject } from "react";
import { stillWrong } from "@/lib/ui/field-checks";

/**
 * Puts the cursor in the form's first empty field once the page is the component's, unless the
 * person already moved it: a prefilled email (from a link) leaves the password to type.
 */
export function useFocusFirstEmpty(form: RefObject<HTMLFormElement | null>, ready: boolean): void {
  useEffect(() => {
    if (!ready || (document.activeElement && document.activeElement !== document.body)) return;
    const fields = form.current?.querySelectorAll<HTMLInputElement>("input:not([type=hidden]):not([type=checkbox]):not([disabled])");
    [...(fields ?? [])].find((field) => field.value === "")?.focus();
  }, [form, ready]);
}

/**
 * The form's input handler that takes an error away as soon as its field is corrected: `check`
 * runs on the form as it is now, and only errors already shown can stay (stillWrong).
 */
export function clearWhenCorrected<Name extends string>(
  shown: Partial<Record<Name, string>>,
  setShown: (update: (shown: Partial<Record<Name, string>>) => Partial<Record<Name, string>>) => void,
  check: (value: (name: string) => string) => Partial<Record<Name, string>>,
): (event: FormEvent<HTMLFormElement>) => void {
  return (event) => {
    if (Object.keys(shown).length === 0) return;
    const form = event.currentTarget;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.value ?? "";
    setShown((current) => stillWrong(current, check(value)));
  };
}
