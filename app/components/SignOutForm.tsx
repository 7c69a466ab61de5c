import { cookies } from "next/headers";
import { SignOutButton } from "./SignOutButton";

// next-auth's double-submit cookie is `<token>|<hash>`; __Host- when the app's URL is https.
const CSRF_COOKIES = ["__Host-next-auth.csrf-token", "next-auth.csrf-token"];

/**
 * Sign-out as a plain form post, so it works without JavaScript: the CSRF token comes from the
 * cookie next-auth set when this browser signed in. Without that cookie, the script button.
 */
export async function SignOutForm() {
  const jar = await cookies();
  const value = CSRF_COOKIES.map((name) => jar.get(name)?.value).find(Boolean);
  const csrfToken = value?.split("|")[0];
  if (!csrfToken) return <SignOutButton />;
  return (
    <form method="post" action="/api/auth/signout" className="inline">
      <input type="hidden" name="csrfToken" value={csrfToken} />
      <input type="hidden" name="callbackUrl" value="/" />
      <button type="submit" className="link nav-item">
        Sign out
      </button>
    </form>
  );
}
