// @ts-check
// The path a request is for, as Next.js routes it: imported by server.mjs (which runs outside the
// build, so it ships beside it: scripts/package-standalone.sh) and by the fast path's tests.

// A path that needs no work: slashes and unreserved characters, no dot segment, no empty segment.
const PLAIN = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-._~]+)*\/?$/;

/**
 * The path of a request target, normalised as Next.js normalises it before routing (WHATWG URL:
 * `.` and `..` segments, `%2e`, a `#fragment`, absolute-form targets; other escapes stay, as Next.js
 * leaves them: `credential%73` is its 404), or null for a target that is no URL at all (`*`). server.mjs
 * matches the fast path, the door's exemptions and the routes it answers in front by this, once:
 * matched by the raw target, `/api/auth/callback/./credentials` went through Next.js's router to
 * the same handler, at the attacker's choice of cost (the attacker review of record 42). A
 * backslash is left as it is: Next.js redirects it rather than routing it.
 * @param {string} target
 * @returns {string | null}
 */
export function requestPath(target) {
  const path = target.split("?", 1)[0] ?? "";
  if (PLAIN.test(path)) return path;
  if (path.includes("\\")) return path;
  let url;
  try {
    url = path.startsWith("/") ? new URL(`http://n${path}`) : new URL(path);
  } catch {
    return null;
  }
  if (!path.startsWith("/") && url.protocol !== "http:" && url.protocol !== "https:") return null;
  return url.pathname;
}
