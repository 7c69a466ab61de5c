import Link from "next/link";
import { getServerSession } from "next-auth";
import { authOptions } from "@/lib/auth/options";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const session = await getServerSession(authOptions());
  return (
    <div className="card">
      <h1>Welcome to Gatehouse</h1>
      {session?.user?.email ? (
        <p data-testid="who">
          Signed in as <strong>{session.user.email}</strong>. <Link href="/account">Your account</Link>
        </p>
      ) : (
        <p data-testid="who">
          You are not signed in. <Link href="/sign-in">Sign in</Link> or <Link href="/register">create an account</Link>.
        </p>
      )}
    </div>
  );
}
