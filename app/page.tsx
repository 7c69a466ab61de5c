import Link from "next/link";
import { getTranslations } from "next-intl/server";
import { currentSession } from "@/lib/auth/browser-session";
import { gatehouse } from "@/lib/app";
import { currentBrand } from "@/lib/app";

export const dynamic = "force-dynamic";

export default async function HomePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [session, brand, t] = await Promise.all([currentSession(), currentBrand(), getTranslations("home")]);
  // After "Delete account" (app/api/account/delete): said once, to the browser that did it.
  const deleted = !session && (await searchParams).notice === "account_deleted";
  const userId = session?.userId;
  const failures = userId ? await (await gatehouse()).events.failuresBeforeLatestSignIn(userId) : 0;
  const account = (chunks: React.ReactNode) => <Link href="/account">{chunks}</Link>;
  return (
    <div className="card">
      <h1>{t("welcome", { brand: brand.name })}</h1>
      {deleted ? (
        <p className="banner ok" role="status" data-testid="account-deleted">
          {t("accountDeleted")}
        </p>
      ) : null}
      {session?.email ? (
        <>
          <p data-testid="who">{t.rich("signedInAs", { email: session.email, address: (chunks) => <strong>{chunks}</strong>, account })}</p>
          {failures > 0 ? (
            <p className="banner warn" role="status" data-testid="failures-before-sign-in">
              {t.rich("failuresBefore", { count: failures, events: account })}
            </p>
          ) : null}
        </>
      ) : (
        <p data-testid="who">
          {t.rich("signedOut", {
            signIn: (chunks) => <Link href="/sign-in">{chunks}</Link>,
            register: (chunks) => <Link href="/register">{chunks}</Link>,
          })}
        </p>
      )}
    </div>
  );
}
