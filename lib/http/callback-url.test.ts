import { describe, expect, it } from "vitest";
import { onwardPath, safeCallbackPath, safeRedirect } from "./callback-url";

describe("safeCallbackPath", () => {
  it("keeps same-site paths with their query and hash", () => {
    expect(safeCallbackPath("/account")).toBe("/account");
    expect(safeCallbackPath("/account?tab=events#latest")).toBe("/account?tab=events#latest");
    expect(safeCallbackPath("/a/../account")).toBe("/account");
  });

  it.each([
    ["a tab", "/\t/evil.example"],
    ["CR and LF", "/\r\n/evil.example"],
    ["a NUL", "/\u0000/evil.example"],
    ["DEL", "/\u007f/evil.example"],
    ["a backslash", "/\\evil.example"],
    ["a backslash after the slash", "\\/evil.example"],
    ["a protocol-relative URL", "//evil.example"],
    ["a dot segment into a protocol-relative path", "/.//evil.example"],
    ["an absolute URL", "https://evil.example/"],
    ["an absolute URL on our scheme", "javascript:alert(1)"],
    ["an encoded tab", "/%09/evil.example"],
    ["encoded backslashes", "/%5C%5Cevil.example"],
    ["an encoded CR LF", "/%0d%0a/evil.example"],
    ["a malformed escape", "/%E0%A4%A"],
    ["a relative path", "account"],
    ["nothing", ""],
    ["a 3,000-character path", `/${"a".repeat(3_000)}`],
  ])("refuses %s", (_name, value) => {
    expect(safeCallbackPath(value)).toBe("/");
    expect(safeCallbackPath(value, "/home")).toBe("/home");
  });

  it("refuses undefined and null", () => {
    expect(safeCallbackPath(undefined)).toBe("/");
    expect(safeCallbackPath(null)).toBe("/");
  });
});

describe("safeRedirect (next-auth's redirect callback)", () => {
  const base = "https://app.example";

  it("keeps same-origin URLs and paths, on the app's origin", () => {
    expect(safeRedirect("/account", base)).toBe("https://app.example/account");
    expect(safeRedirect("https://app.example/account?x=1", base)).toBe("https://app.example/account?x=1");
  });

  it("sends other origins and unsafe paths home", () => {
    expect(safeRedirect("https://evil.example/account", base)).toBe(base);
    expect(safeRedirect("https://app.example.evil.example/", base)).toBe(base);
    expect(safeRedirect("/\t/evil.example", base)).toBe("https://app.example/");
    expect(safeRedirect("//evil.example", base)).toBe("https://app.example/");
  });
});

describe("onwardPath", () => {
  it("sends a signed-in visitor on to the callback, never back to a sign-in page", () => {
    expect(onwardPath("/account")).toBe("/account");
    expect(onwardPath("/")).toBe("/");
    expect(onwardPath("/sign-in")).toBe("/");
    expect(onwardPath("/register?x=1")).toBe("/");
    expect(onwardPath("/sign-in-help")).toBe("/sign-in-help");
  });
});
