import { describe, expect, it } from "vitest";
import { carriesFormToken, fromOwnPages, sender } from "./csrf";
import type { Senders } from "./route-policies";
import { sessionFormToken } from "./form-token";

const config = { http: { publicUrl: "https://login.example.com/" }, session: { secret: "s".repeat(40) } };

describe("the one CSRF rule", () => {
  it("takes a post from the app's own pages only: Fetch Metadata, else the exact Origin", () => {
    expect(fromOwnPages(new Headers({ "sec-fetch-site": "same-origin" }), config)).toBe(true);
    expect(fromOwnPages(new Headers({ origin: "https://login.example.com" }), config)).toBe(true);
    // Fetch Metadata wins over an Origin that names the app: a sibling subdomain is another site.
    expect(fromOwnPages(new Headers({ "sec-fetch-site": "same-site", origin: "https://login.example.com" }), config)).toBe(false);
    expect(fromOwnPages(new Headers({ origin: "https://evil.example" }), config)).toBe(false);
    expect(fromOwnPages(new Headers(), config)).toBe(false);
  });

  it("wants the form token of the very session that posts, in the form's formToken field", () => {
    const token = sessionFormToken(config.session.secret, "sid-1");
    expect(carriesFormToken(config, "sid-1", { formToken: token })).toBe(true);
    expect(carriesFormToken(config, "sid-2", { formToken: token })).toBe(false);
    expect(carriesFormToken(config, "sid-1", { csrfToken: token })).toBe(false);
    expect(carriesFormToken(config, "sid-1", {})).toBe(false);
    expect(carriesFormToken({ ...config, session: { secret: "t".repeat(40) } }, "sid-1", { formToken: token })).toBe(false);
  });
});

describe("the same-origin step, as a route's senders say", () => {
  const verdict = (headers: Record<string, string>, senders?: Senders, method = "POST") =>
    sender(new Headers(headers), method, senders, config);
  const own = { "sec-fetch-site": "same-origin" };
  const crossSite = { "sec-fetch-site": "cross-site" };
  const json = { "content-type": "application/json" };

  it("asks nothing of a request that changes nothing", () => {
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(verdict(crossSite, undefined, method)).toBe("allowed");
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "PROPFIND"]) expect(verdict(crossSite, undefined, method)).toBe("cross_site");
  });

  it("takes only the app's own pages by default, and refuses a request that names neither site nor origin", () => {
    expect(verdict(own)).toBe("allowed");
    expect(verdict({ origin: "https://login.example.com" })).toBe("allowed");
    expect(verdict(crossSite)).toBe("cross_site");
    expect(verdict(json)).toBe("cross_site");
  });

  it("takes a script's JSON where the route says so, and nothing else that names no origin", () => {
    const scripts: Senders = { nonBrowser: "scripts" };
    expect(verdict(json, scripts)).toBe("allowed");
    expect(verdict({ "content-type": "text/plain" }, scripts)).toBe("json_required");
    expect(verdict({}, scripts)).toBe("json_required");
    expect(verdict({ ...json, ...crossSite }, scripts)).toBe("cross_site");
    expect(verdict({ ...json, origin: "null" }, scripts)).toBe("cross_site");
  });

  it("takes any request without a cookie where the route says so, and holds one with a cookie to the rule", () => {
    const apps: Senders = { cookieless: "apps" };
    expect(verdict({ ...json, ...crossSite }, apps)).toBe("allowed");
    expect(verdict({ ...json, origin: "capacitor://localhost" }, apps)).toBe("allowed");
    expect(verdict({ ...json, ...crossSite, cookie: "gatehouse-device=x" }, apps)).toBe("cross_site");
    expect(verdict({ ...json, cookie: "gatehouse-device=x" }, apps)).toBe("cross_site");
    expect(verdict({ ...json, cookie: "gatehouse-device=x" }, { ...apps, nonBrowser: "apps" })).toBe("allowed");
    expect(verdict({ ...json, ...own, cookie: "gatehouse-device=x" }, apps)).toBe("allowed");
  });

  it("takes a Bearer token's request where the route says so, whatever cookie or site it names, and no other scheme", () => {
    const api: Senders = { cookieless: "apps", bearer: "a Bearer token's write" };
    const cookie = { cookie: "theme=dark" };
    expect(verdict({ ...json, ...cookie, authorization: "Bearer abc" }, api)).toBe("allowed");
    expect(verdict({ ...json, ...cookie, ...crossSite, authorization: "bearer abc" }, api)).toBe("allowed");
    // A browser adds Basic credentials on its own; nor is a header that only starts with the word a Bearer token.
    expect(verdict({ ...json, ...cookie, ...crossSite, authorization: "Basic dXNlcjpwYXNz" }, api)).toBe("cross_site");
    expect(verdict({ ...json, ...cookie, authorization: "Bearerabc" }, api)).toBe("cross_site");
    expect(verdict({ ...json, ...cookie }, api)).toBe("cross_site");
    // Not where the route does not say so (it might read the cookie beside the token).
    expect(verdict({ ...json, ...cookie, authorization: "Bearer abc" }, { cookieless: "apps" })).toBe("cross_site");
  });

  it("takes anything where the route changes nothing of anyone's", () => {
    expect(verdict({ ...crossSite, cookie: "a=b" }, { anySite: "reports" })).toBe("allowed");
  });
});
