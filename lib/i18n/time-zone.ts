/**
 * An IANA time zone as a browser reports it (`Intl.DateTimeFormat().resolvedOptions().timeZone`),
 * when Intl knows it; anything else (too long, unknown, not a string) is no zone, never an error:
 * it only decides how mails write a time, and UTC is always written too.
 */
export function validTimeZone(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(value)) return undefined;
  try {
    return new Intl.DateTimeFormat("en", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
