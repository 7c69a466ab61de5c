import fs from "node:fs";
import path from "node:path";
import type { AppConfig } from "@/lib/config/env";
import type { Palette } from "./contrast";
import { checkLogo, LOGO_BOX, logoBox, type Logo } from "./logo";

/**
 * Who this instance presents itself as: the client's name, logo, colour and links (BRAND_* and
 * the *_URL variables). Built once at start by the composition root; pages read it through
 * currentBrand() (lib/app.ts), mails through mailBrandOf().
 */
export type Brand = {
  name: string;
  /** null: the built-in Gatehouse mark (app/components/Logo.tsx). */
  logo: Logo | null;
  /** null: the stylesheet's own colours (app/globals.css). */
  color: Palette | null;
  supportUrl: string | null;
  supportEmail: string | null;
  privacyUrl: string | null;
  termsUrl: string | null;
};

type BrandSettings = Pick<AppConfig, "brand">;

export type ReadFile = (file: string) => Uint8Array;

/** The brand `config` describes; a logo that is missing, too large or not a safe SVG/PNG throws, naming BRAND_LOGO. */
export function loadBrand(config: BrandSettings, readFile: ReadFile = fs.readFileSync): Brand {
  let logo: Logo | null = null;
  if (config.brand.logoFile !== undefined) {
    const file = path.resolve(config.brand.logoFile);
    let bytes: Uint8Array;
    try {
      bytes = readFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new Error(`Invalid configuration: BRAND_LOGO: ${file} cannot be read (${code}); give an SVG or PNG file`);
    }
    const checked = checkLogo(file, bytes);
    if (!checked.ok) throw new Error(`Invalid configuration: BRAND_LOGO: ${file}: ${checked.problem}`);
    logo = checked.logo;
  }
  return {
    name: config.brand.name,
    logo,
    color: config.brand.palette,
    supportUrl: config.brand.supportUrl ?? null,
    supportEmail: config.brand.supportEmail ?? null,
    privacyUrl: config.brand.privacyUrl ?? null,
    termsUrl: config.brand.termsUrl ?? null,
  };
}

/** The logo's URL on this app (its hash in the path, so it can be cached for ever), or null for the built-in mark. */
export function logoPath(brand: Brand): string | null {
  return brand.logo ? `/api/brand/logo/${brand.logo.hash}` : null;
}

/** Where to ask for help: the support page, or a mailto: link. */
export function supportHref(brand: Brand): string | null {
  return brand.supportUrl ?? (brand.supportEmail ? `mailto:${brand.supportEmail}` : null);
}

/** The footer's and mails' links; `label` is the key of its name in the `common` catalogue. */
export function footerLinks(brand: Brand): { label: "support" | "privacy" | "terms"; href: string }[] {
  const support = supportHref(brand);
  return [
    ...(support ? [{ label: "support" as const, href: support }] : []),
    ...(brand.privacyUrl ? [{ label: "privacy" as const, href: brand.privacyUrl }] : []),
    ...(brand.termsUrl ? [{ label: "terms" as const, href: brand.termsUrl }] : []),
  ];
}

/**
 * The brand's colours as CSS custom properties for <html style>: app/globals.css reads them with
 * its own colours as the fallback. Undefined without BRAND_COLOR, so the default page is unchanged.
 */
export function brandStyle(brand: Brand): Record<string, string> | undefined {
  if (!brand.color) return undefined;
  const { light, dark } = brand.color;
  return {
    "--brand-accent": light.accent,
    "--brand-accent-fg": light.accentText,
    "--brand-focus": light.focus,
    "--brand-accent-dark": dark.accent,
    "--brand-accent-fg-dark": dark.accentText,
    "--brand-focus-dark": dark.focus,
  };
}

/** What mail templates need of the brand; every URL absolute, as mail has no base. */
export type MailBrand = {
  name: string;
  logoUrl: string | null;
  /** The logo's box in mail, its shape kept (mail clients size an image by its attributes only). */
  logoWidthPx: number;
  logoHeightPx: number;
  supportUrl: string | null;
  privacyUrl: string | null;
  termsUrl: string | null;
  /** The accent as the light theme shows it (mail clients mostly render light). */
  color: string;
};

/** The colour of the built-in theme, for mail when no BRAND_COLOR is set (app/globals.css --accent). */
export const DEFAULT_ACCENT = "#1f5fbf";

/** `publicUrl` is the app's origin (NEXTAUTH_URL), as the recovery links use: never a request's Host header. */
export function mailBrandOf(brand: Brand, publicUrl: string): MailBrand {
  const logo = logoPath(brand);
  const box = logoBox(brand.logo?.aspectRatio ?? 1, LOGO_BOX.mail.heightPx, LOGO_BOX.mail.maxWidthPx);
  return {
    name: brand.name,
    logoUrl: logo ? new URL(logo, publicUrl).toString() : null,
    logoWidthPx: box.widthPx,
    logoHeightPx: box.heightPx,
    supportUrl: supportHref(brand),
    privacyUrl: brand.privacyUrl,
    termsUrl: brand.termsUrl,
    color: brand.color?.light.accent ?? DEFAULT_ACCENT,
  };
}
