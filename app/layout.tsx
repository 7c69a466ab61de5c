import type { Metadata } from "next";
import Link from "next/link";
import { currentSession } from "@/lib/auth/current-session";
import { SignOutForm } from "./components/SignOutForm";
import "./globals.css";

export const metadata: Metadata = {
  title: "Gatehouse",
  description: "A login reference application",
};

export const dynamic = "force-dynamic";

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const session = await currentSession();
  return (
    <html lang="en">
      <body>
        <header className="site">
          <Link href="/" className="brand">
            Gatehouse
          </Link>
          <nav aria-label="Account" style={{ display: "flex", gap: "1rem", alignItems: "center" }}>
            {session ? (
              <>
                <Link href="/account">Account</Link>
                <SignOutForm />
              </>
            ) : (
              <>
                <Link href="/sign-in">Sign in</Link>
                <Link href="/register">Register</Link>
              </>
            )}
          </nav>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
