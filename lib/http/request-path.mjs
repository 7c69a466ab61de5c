// @ts-check
// The path a request is for, as Next.js routes it: imported by server.mjs (which runs outside the
// build, so it ships beside it: scripts/package-standalone.sh) and by the fast path's tests.

// A path that needs no work: slashes and unreserved characters, no dot segment, no empty segment.
const PLAIN = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-._~]+)*\/?$/;

/**
 * The path of a request target, normalised as Next.js normalises it before routing (WHATWG URL:
 * `.` and `..` segments, `%2e`, a `#fragment`; other escapes stay, as Next.js leaves them:
 * `credential%73` is its 404), or null for a target that is no URL at all (`*`). A target Next.js
 * redirects before routing (any `//` or `\` before the query, so every absolute-form one) is
 * returned as it is, which names no route. server.mjs
 * matches the fast path, the door's exemptions and the routes it answers in front by this, once:
 * matched by the raw target, `/api/auth/callback/./credentials` went through Next.js's router to
 * the same handler, at the attacker's choice of cost (the attacker review of record 42).
 * @param {string} target
 * @returns {string | null}
 */
export function requestPath(target) {
  const path = target.split("?", 1)[0] ?? "";
  if (PLAIN.test(path)) return path;
  // Not a path: Next.js threw (a 500) on a target it cannot parse; an absolute-form one holds `//`.
  if (!path.startsWith("/")) return URL.canParse(target) ? target : null;
  // Next.js answers 308 before routing to any target whose part before `?` holds `//` or `\`:
  // matched by nothing here either.
  if (/\/\/|\\/.test(path)) return path;
  try {
    return new URL(`http://n${path}`).pathname;
  } catch {
    return null;
  }
}
