"use client";

import { useDeferredValue, useEffect, useRef, useState } from "react";
import type { GuessEstimate } from "@/lib/password/password-rules";
import {
  minimumGuessesLog10,
  passwordProblem,
  PASSWORD_MIN_LENGTH,
  PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR,
} from "@/lib/password/password-rules";
import { problemText } from "@/lib/ui/password-checks";
import { useLocale, useT } from "./Messages";

type Engine = { estimate(password: string, email?: string): GuessEstimate & { score: number }; isCommon(normalised: string): boolean };

const loading = new Map<string, Promise<Engine>>();

/** The words of the page's language an attacker tries first: German's only when the meter runs in German. */
function languageDictionary(locale: string): Promise<Record<string, string[]>> {
  return locale === "de" ? import("@zxcvbn-ts/language-de").then((de) => de.dictionary) : Promise.resolve({});
}

/**
 * zxcvbn-ts and its dictionaries (several hundred kB) load on first keystroke, in a chunk of
 * their own, so pages that show the meter do not carry them up front.
 */
function loadEngine(locale: string): Promise<Engine> {
  let engine = loading.get(locale);
  if (!engine) {
    engine = Promise.all([
      import("@zxcvbn-ts/core"),
      import("@zxcvbn-ts/language-common"),
      languageDictionary(locale),
      import("@/lib/password/server-guesses"),
      import("@/lib/password/guesses"),
    ]).then(([core, common, words, list, guesses]) => {
      const zxcvbn = new core.ZxcvbnFactory({ dictionary: { ...common.dictionary, ...words }, graphs: common.adjacencyGraphs });
      return { estimate: (password, email) => guesses.estimateGuesses(zxcvbn, password, email), isCommon: list.isCommonPassword };
    });
    loading.set(locale, engine);
  }
  return engine;
}

/**
 * A strength meter for the password field named `field` of the enclosing form, with the reason
 * the server would refuse it (the same rules module, the same zxcvbn-ts estimate and threshold).
 * It only reads the form, so adding it to a form is one line. Guidance, not the gate: the server
 * decides. `minLength`: the account's minimum (15, or 8 with a passkey), said as soon as typing starts.
 */
export function PasswordStrength({
  field,
  emailField,
  email,
  fieldError,
  minLength = PASSWORD_MIN_LENGTH,
}: {
  field: string;
  emailField?: string;
  email?: string;
  minLength?: number;
  /** The error shown under the field: the meter does not say the same thing a second time. */
  fieldError?: string;
}) {
  const t = useT();
  const locale = useLocale();
  const anchor = useRef<HTMLDivElement>(null);
  const [typed, setTyped] = useState({ password: "", email: email ?? "" });
  const [engine, setEngine] = useState<Engine | null>(null);
  // The password as last sent: while the field still holds it and shows an error (the server's
  // breach check, say, which the meter cannot run), it is a refused password, never a strong one.
  const [sent, setSent] = useState<string | null>(null);
  const { password, email: currentEmail } = useDeferredValue(typed);

  useEffect(() => {
    const form = anchor.current?.closest("form");
    if (!form) return;
    const onInput = () => {
      const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.value ?? "";
      setTyped({ password: value(field), email: emailField ? value(emailField) : (email ?? "") });
      // A dictionary that fails to load leaves the meter to the rules; the next keystroke tries again.
      loadEngine(locale).then(setEngine, () => loading.delete(locale));
    };
    const onSubmit = () => setSent((form.elements.namedItem(field) as HTMLInputElement | null)?.value ?? null);
    form.addEventListener("input", onInput);
    form.addEventListener("submit", onSubmit);
    return () => {
      form.removeEventListener("input", onInput);
      form.removeEventListener("submit", onSubmit);
    };
  }, [field, emailField, email, locale]);

  const estimate = password && engine ? engine.estimate(password, currentEmail || undefined) : undefined;
  const hasOtherFactor = minLength <= PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR;
  const problem = password
    ? passwordProblem(password, {
        email: currentEmail,
        isCommon: engine?.isCommon ?? (() => false),
        minLength,
        estimate,
        minGuessesLog10: minimumGuessesLog10({ hasOtherFactor }),
      })
    : null;
  const refused = fieldError !== undefined && password !== "" && password === sent;
  // A password the rules or the server refuse is shown as very weak, whatever zxcvbn thinks of it;
  // the field's error says why, so the meter adds no words.
  const score = !estimate ? (refused ? 0 : null) : problem || refused ? 0 : estimate.score;
  const said = refused ? fieldError : problem ? problemText(problem, t, minLength, estimate?.patterns) : null;
  return (
    <div ref={anchor} className="hint" data-testid="password-strength" data-score={score ?? ""}>
      {score !== null ? (
        <>
          <meter min={0} max={4} low={2} high={3} optimum={4} value={score} aria-label={t("fields.strengthMeter")} />{" "}
        </>
      ) : null}
      <span aria-live="polite">
        {!password ? "" : said && said !== fieldError ? said : score !== null ? t("fields.strength", { score }) : ""}
      </span>
    </div>
  );
}
