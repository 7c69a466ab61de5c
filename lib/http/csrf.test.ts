import { describe, expect, it } from "vitest";
import { carriesFormToken, fromOwnPages } from "./csrf";
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
