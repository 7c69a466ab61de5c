/** Only same-site paths: `//evil.example` and absolute URLs would make sign-in an open redirect. */
export function safeCallbackPath(value: string | null | undefined, fallback = "/"): string {
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return fallback;
  return value;
}
