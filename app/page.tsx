import Link from "next/link";
import { currentSession } from "@/lib/auth/current-session";
import { gatehouse } from "@/lib/auth/gatehouse";
import { currentBrand } from "@/lib/brand/current-brand";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const [session, brand] = await Promise.all([currentSession(), currentBrand()]);
  const userId = session?.userId;
  const failures = userId ? await (await gatehouse()).events.failuresBeforeLatestSignIn(userId) : 0;
  return (
    <div className="card">
      <h1>Welcome to {brand.name}</h1>
      {session?.email ? (
        <>
          <p data-testid="who">
            Signed in as <strong>{session.email}</strong>. <Link href="/account">Your account</Link>
          </p>
          {failures > 0 ? (
            <p className="banner warn" role="status" data-testid="failures-before-sign-in">
              {failures === 1 ? "There was 1 failed sign-in attempt" : `There were ${failures} failed sign-in attempts`} on your account
              before this sign-in. <Link href="/account">See where they came from</Link>.
            </p>
          ) : null}
        </>
      ) : (
        <p data-testid="who">
          You are not signed in. <Link href="/sign-in">Sign in</Link> or <Link href="/register">create an account</Link>.
        </p>
      )}
    </div>
  );
}
