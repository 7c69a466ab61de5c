import type { Metadata, Viewport } from "next";
import Link from "next/link";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { getLocale, getTranslations } from "next-intl/server";
import { NEW_PASSWORD_PATH, PAGE_PATH_HEADER } from "@/lib/http/page-paths";
import { currentSession } from "@/lib/auth/browser-session";
import { brandStyle, footerLinks } from "@/lib/brand/brand";
import { currentBrand } from "@/lib/app";
import { gatehouse } from "@/lib/app";
import { PSEUDO_LOCALE } from "@/lib/i18n/locales";
import { Logo } from "./components/Logo";
import { SignOutForm } from "./components/SignOutForm";
import "./globals.css";

export async function generateMetadata(): Promise<Metadata> {
  const [{ name }, t] = await Promise.all([currentBrand(), getTranslations("common")]);
  return { title: { default: name, template: `%s · ${name}` }, description: t("description", { brand: name }) };
}

// Light and dark both follow the system; the meta tag lets the browser paint its own parts
// (scroll bars, form controls, the page before CSS) to match.
export const viewport: Viewport = {
  colorScheme: "light dark",
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#ffffff" },
    { media: "(prefers-color-scheme: dark)", color: "#181b21" },
  ],
};

export const dynamic = "force-dynamic";

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const [session, brand, locale, t, incoming, { i18n }] = await Promise.all([
    currentSession(),
    currentBrand(),
    getLocale(),
    getTranslations("common"),
    headers(),
    gatehouse(),
  ]);
  const path = incoming.get(PAGE_PATH_HEADER) ?? "/";
  // A breached password is replaced before anything else: every page but that form sends there.
  if (session?.passwordChangeRequired && path !== NEW_PASSWORD_PATH) redirect(NEW_PASSWORD_PATH);
  const links = footerLinks(brand);
  return (
    // The brand's colours as custom properties on <html> (style-src allows inline styles; no nonce needed).
    <html lang={locale} style={brandStyle(brand)}>
      <body>
        {/* The first thing a keyboard reaches: past the header to the page's own content. */}
        <a href="#main" className="skip-link">
          {t("skipToContent")}
        </a>
        <header className="site">
          <Link href="/" className="brand">
            <Logo brand={brand} />
            {brand.name}
          </Link>
          <nav aria-label={t("accountNav")}>
            {session ? (
              <>
                <Link href="/account" className="nav-item">
                  {t("account")}
                </Link>
                <SignOutForm />
              </>
            ) : (
              <>
                <Link href="/sign-in" className="nav-item">
                  {t("signIn")}
                </Link>
                <Link href="/register" className="nav-item">
                  {t("register")}
                </Link>
              </>
            )}
          </nav>
        </header>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
        <footer className="site">
          {links.length > 0 ? (
            <nav aria-label={t("brandLinks", { brand: brand.name })}>
              {links.map((link) => (
                <a key={link.label} href={link.href}>
                  {t(link.label)}
                </a>
              ))}
            </nav>
          ) : null}
          {/* A plain form: the choice works without JavaScript, and the page comes back in the new language. */}
          <form method="post" action="/api/locale" className="language-switch">
            <input type="hidden" name="returnTo" value={path} />
            <label htmlFor="language-switch">{t("language")}</label>
            <select id="language-switch" name="locale" defaultValue={locale}>
              {/* The pseudo-locale is for tests, chosen by its cookie only: no visitor is offered it. */}
              {i18n.locales
                .filter((tag) => tag !== PSEUDO_LOCALE || tag === locale)
                .map((tag) => (
                  <option key={tag} value={tag} lang={tag === PSEUDO_LOCALE ? undefined : tag}>
                    {i18n.translator(tag, "common")("languageName")}
                  </option>
                ))}
            </select>
            <button type="submit" className="secondary">
              {t("changeLanguage")}
            </button>
          </form>
        </footer>
      </body>
    </html>
  );
}
