import type { Metadata, Viewport } from "next";
import Link from "next/link";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { NEW_PASSWORD_PATH, PAGE_PATH_HEADER } from "@/lib/http/page-paths";
import { currentSession } from "@/lib/auth/current-session";
import { Logo } from "./components/Logo";
import { SignOutForm } from "./components/SignOutForm";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Gatehouse", template: "%s · Gatehouse" },
  description: "A login reference application",
};

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
  const session = await currentSession();
  // A breached password is replaced before anything else: every page but that form sends there.
  if (session?.passwordChangeRequired && (await headers()).get(PAGE_PATH_HEADER) !== NEW_PASSWORD_PATH) redirect(NEW_PASSWORD_PATH);
  return (
    <html lang="en">
      <body>
        {/* The first thing a keyboard reaches: past the header to the page's own content. */}
        <a href="#main" className="skip-link">
          Skip to main content
        </a>
        <header className="site">
          <Link href="/" className="brand">
            <Logo />
            Gatehouse
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
      </body>
    </html>
  );
}
