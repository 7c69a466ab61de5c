// C0 controls, DEL and the backslash: URL parsers strip or reinterpret them, so "/\t/evil.example"
// passes a prefix check and then becomes "//evil.example".
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

// Any fixed origin serves to resolve a path; only whether the result stays on it matters.
const BASE = "https://gatehouse.invalid";

/**
 * A redirect target that stays on this site: `value` is resolved with the URL parser against the
 * site's origin, and only the path, query and hash of a same-origin result are kept. Absolute
 * URLs, protocol-relative paths, control characters and backslashes (raw or percent-decoded by
 * a browser) give `fallback`.
 */
export function safeCallbackPath(value: string | null | undefined, fallback = "/"): string {
  if (!value || value.length > 2048 || !value.startsWith("/") || UNSAFE.test(value)) return fallback;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return fallback;
  }
  if (url.origin !== BASE) return fallback;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // "/.//evil" resolves to the path "//evil", which a browser reads as another host.
  if (path.startsWith("//") || UNSAFE.test(decodeSafely(path))) return fallback;
  return path;
}

function decodeSafely(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return "\\";
  }
}

/** next-auth's redirect callback: absolute URLs on the app's own origin, everything else to the same rule. */
export function safeRedirect(url: string, baseUrl: string): string {
  let target = url;
  try {
    const absolute = new URL(url);
    if (absolute.origin !== new URL(baseUrl).origin) return baseUrl;
    target = `${absolute.pathname}${absolute.search}${absolute.hash}`;
  } catch {
    // Not absolute: a path, checked below.
  }
  return `${baseUrl.replace(/\/+$/, "")}${safeCallbackPath(target)}`;
}

/** Where a visitor who is already signed in goes instead of a sign-in page: its callback, unless that is a sign-in page again. */
export function onwardPath(callbackPath: string): string {
  return /^\/(sign-in|register)(?:[/?#]|$)/.test(callbackPath) ? "/" : callbackPath;
}
