/**
 * Sentences the server and the pages both show, or that several places show, written once. Pure
 * strings (no zod, no server code), so client components import them at no cost. A test that
 * pins a sentence keeps its own copy: it checks what a user reads, not that a constant is used.
 */

/**
 * Every failed sign-in alike (wrong password, unknown account, address not yet confirmed): it
 * names what the owner may need without claiming which cause it was, so it is no oracle.
 */
export const INCORRECT_CREDENTIALS =
  "We could not sign you in with that email and password: check both, or confirm your address first with the link we emailed you.";

/** A sign-in body without a usable email or password (browser form and API alike). */
export const ENTER_EMAIL_AND_PASSWORD = "Enter your email and password.";

/** A JSON body whose fields failed validation; `fields` names each one. */
export const CHECK_HIGHLIGHTED_FIELDS = "Check the highlighted fields.";

/** A form posted from a page whose browser session has ended meanwhile. */
export const SESSION_ENDED = "Your session has ended. Sign in again.";

/** The server's 503 when the password check could not finish, and the sign-in page's own when it got no answer. */
export const SIGN_IN_UNAVAILABLE = "Sign-in is unavailable right now. Try again in a moment.";

/** A recovery page that got no answer at all. */
export const UNAVAILABLE = "This is unavailable right now. Try again in a moment.";

/** A refusal whose body carries no sentence of its own. */
export const SOMETHING_WENT_WRONG = "Something went wrong. Try again.";

/** The username-wide lock, as a client without a known-device cookie is told it (the wait follows). */
export const ACCOUNT_SIGN_IN_PAUSED = "Sign-in to this account is paused after repeated failed attempts.";

/** A known device's own lock. */
export const DEVICE_SIGN_IN_PAUSED = "Sign-in from this device is paused after repeated failed attempts.";

/** Every way an emailed link can be bad, told alike: which one it was is nobody's business. */
export const LINK_INVALID = "This link has expired or was already used. Ask for a new one.";

/** "Check your email" after registering, for a new and a taken address alike. */
export const REGISTRATION_CHECK_EMAIL = "Check your email: we sent a message to that address with the next step.";

/** "Check your email" after asking for a reset link, whether or not an account uses the address. */
export const RESET_CHECK_EMAIL =
  "If an account uses that address, we sent it a link to choose a new password. It works for a short time, once.";

/** "Send it again" on the check-your-email page, for every address alike. */
export const VERIFICATION_CHECK_EMAIL =
  "If that address has an account waiting to be confirmed, we sent it a new confirmation link. The newest link is the one that works.";

/** "Email me a new link" on the lock banner, for every address alike. */
export const UNLOCK_CHECK_EMAIL =
  "If sign-in to an account with that address is paused, we sent it a new link to sign in from this browser.";
