import type { ReactNode } from "react";

export type FieldAria = { "aria-invalid"?: true; "aria-describedby"?: string };

/**
 * A labelled form field: the label names the control and nothing else, and the hint and the
 * error are separate elements the control points at (aria-describedby), so each is read once.
 */
export function Field({
  id,
  label,
  hint,
  error,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  error?: string;
  children: (aria: FieldAria) => ReactNode;
}) {
  const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {children({ "aria-invalid": error ? true : undefined, "aria-describedby": describedBy || undefined })}
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
