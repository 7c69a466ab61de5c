import type { Metadata, Viewport } from "next";
import Link from "next/link";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { NEW_PASSWORD_PATH, PAGE_PATH_HEADER } from "@/lib/http/page-paths";
import { currentSession } from "@/lib/auth/current-session";
import { brandStyle, footerLinks } from "@/lib/brand/brand";
import { currentBrand } from "@/lib/brand/current-brand";
import { Logo } from "./components/Logo";
import { SignOutForm } from "./components/SignOutForm";
import "./globals.css";

export async function generateMetadata(): Promise<Metadata> {
  const { name } = await currentBrand();
  return { title: { default: name, template: `%s · ${name}` }, description: `Sign in to ${name}` };
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
  const [session, brand] = await Promise.all([currentSession(), currentBrand()]);
  // A breached password is replaced before anything else: every page but that form sends there.
  if (session?.passwordChangeRequired && (await headers()).get(PAGE_PATH_HEADER) !== NEW_PASSWORD_PATH) redirect(NEW_PASSWORD_PATH);
  const links = footerLinks(brand);
  return (
    // The brand's colours as custom properties on <html> (style-src allows inline styles; no nonce needed).
    <html lang="en" style={brandStyle(brand)}>
      <body>
        {/* The first thing a keyboard reaches: past the header to the page's own content. */}
        <a href="#main" className="skip-link">
          Skip to main content
        </a>
        <header className="site">
          <Link href="/" className="brand">
            <Logo brand={brand} />
            {brand.name}
          </Link>
          <nav aria-label="Account">
            {session ? (
              <>
                <Link href="/account" className="nav-item">
                  Account
                </Link>
                <SignOutForm />
              </>
            ) : (
              <>
                <Link href="/sign-in" className="nav-item">
                  Sign in
                </Link>
                <Link href="/register" className="nav-item">
                  Register
                </Link>
              </>
            )}
          </nav>
        </header>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
        {links.length > 0 ? (
          <footer className="site">
            <nav aria-label={`${brand.name} links`}>
              {links.map((link) => (
                <a key={link.label} href={link.href}>
                  {link.label}
                </a>
              ))}
            </nav>
          </footer>
        ) : null}
      </body>
    </html>
  );
}
