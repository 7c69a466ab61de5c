import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config/env";
import { brandStyle, footerLinks, loadBrand, logoPath, mailBrandOf } from "./brand";

const SECRET = { NEXTAUTH_SECRET: "s".repeat(32) };
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8"/></svg>';
const folder = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-brand-"));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

function file(name: string, content: string | Uint8Array): string {
  const full = path.join(folder, name);
  fs.writeFileSync(full, content);
  return full;
}

describe("the brand variables", () => {
  it("default to Gatehouse with the built-in mark and colours, and no footer links", () => {
    const brand = loadBrand(parseConfig(SECRET));
    expect(brand).toEqual({
      name: "Gatehouse",
      logo: null,
      color: null,
      supportUrl: null,
      supportEmail: null,
      privacyUrl: null,
      termsUrl: null,
    });
    expect(brandStyle(brand)).toBeUndefined();
    expect(footerLinks(brand)).toEqual([]);
    expect(logoPath(brand)).toBeNull();
  });

  it("carry the client's name, logo, colour and links", () => {
    const brand = loadBrand(
      parseConfig({
        ...SECRET,
        BRAND_NAME: "  Acme  ",
        BRAND_LOGO: file("acme.svg", SVG),
        BRAND_COLOR: "#B3261E",
        SUPPORT_EMAIL: "help@acme.example",
        PRIVACY_URL: "https://acme.example/privacy",
        TERMS_URL: "https://acme.example/terms",
      }),
    );
    expect(brand.name).toBe("Acme");
    expect(brand.logo?.contentType).toBe("image/svg+xml");
    expect(logoPath(brand)).toBe(`/api/brand/logo/${brand.logo!.hash}`);
    expect(brandStyle(brand)).toMatchObject({ "--brand-accent": "#b3261e", "--brand-accent-fg": "#ffffff", "--brand-focus": "#b3261e" });
    expect(footerLinks(brand)).toEqual([
      { label: "support", href: "mailto:help@acme.example" },
      { label: "privacy", href: "https://acme.example/privacy" },
      { label: "terms", href: "https://acme.example/terms" },
    ]);
  });

  it("give mail templates absolute URLs under the public URL", () => {
    const brand = loadBrand(
      parseConfig({ ...SECRET, BRAND_NAME: "Acme", BRAND_LOGO: file("mail.svg", SVG), SUPPORT_URL: "https://acme.example/help" }),
    );
    expect(mailBrandOf(brand, "https://login.acme.example")).toEqual({
      name: "Acme",
      logoUrl: `https://login.acme.example/api/brand/logo/${brand.logo!.hash}`,
      logoWidthPx: 32,
      logoHeightPx: 32,
      supportUrl: "https://acme.example/help",
      privacyUrl: null,
      termsUrl: null,
      color: "#1f5fbf",
    });
  });

  it.each([
    [{ BRAND_COLOR: "red" }, /BRAND_COLOR: must be a #rrggbb colour/],
    [{ BRAND_COLOR: "" }, /BRAND_COLOR: is empty: quote it in an env file/],
    [{ BRAND_COLOR: "#ffcc00" }, /BRAND_COLOR: #ffcc00 cannot be read: light theme, links on --bg #f6f7f9: 1\.\d\d:1 \(needs 4\.5:1\)/],
    [{ BRAND_NAME: "Acme\r\nBcc: x@y" }, /BRAND_NAME: no control characters/],
    [{ BRAND_NAME: "   " }, /BRAND_NAME/],
    [{ SUPPORT_URL: "http://acme.example/help" }, /SUPPORT_URL: must be an https:\/\/ URL/],
    [{ PRIVACY_URL: "javascript:alert(1)" }, /PRIVACY_URL: must be an https:\/\/ URL/],
    [{ TERMS_URL: "not a url" }, /TERMS_URL: must be an https:\/\/ URL/],
    [{ SUPPORT_EMAIL: "nobody" }, /SUPPORT_EMAIL: must be an email address/],
    [{ SUPPORT_EMAIL: "a@b.example", SUPPORT_URL: "https://b.example" }, /SUPPORT_EMAIL: set SUPPORT_URL or SUPPORT_EMAIL, not both/],
  ])("refuse %o at start, naming the variable", (settings, message) => {
    expect(() => parseConfig({ ...SECRET, ...settings })).toThrow(message);
  });

  it.each([
    ["missing", () => path.join(folder, "nope.svg"), /BRAND_LOGO: .*nope\.svg cannot be read \(ENOENT\)/],
    [
      "too large",
      () => file("big.svg", SVG.replace("</svg>", `<!--${"x".repeat(100_001)}--></svg>`)),
      /BRAND_LOGO: .*over the 100000-byte limit/,
    ],
    ["not an image", () => file("logo.gif", "GIF89a"), /BRAND_LOGO: .*neither a PNG nor an SVG/],
    ["a scripted SVG", () => file("evil.svg", SVG.replace("<rect", '<rect onload="alert(1)"')), /BRAND_LOGO: .*event handler/],
  ])("refuse a logo that is %s, naming BRAND_LOGO", (_, logo, message) => {
    expect(() => loadBrand(parseConfig({ ...SECRET, BRAND_LOGO: logo() }))).toThrow(message);
  });
});
