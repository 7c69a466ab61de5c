/**
 * The address a page hands to the sign-in form (after confirming, resetting or unlocking, or
 * "Already confirmed? Sign in"), kept in this tab's sessionStorage for one read: an email
 * address never goes in a URL, where history, logs and Referer headers would keep it.
 */
const KEY = "gatehouse.sign-in-email";

export function carryEmailToSignIn(email: string): void {
  try {
    if (email) sessionStorage.setItem(KEY, email);
  } catch {
    // Storage off (a private mode, a policy): the form is simply not prefilled.
  }
}

/** The carried address, once: reading removes it. */
export function takeCarriedEmail(): string {
  try {
    const email = sessionStorage.getItem(KEY) ?? "";
    sessionStorage.removeItem(KEY);
    return email;
  } catch {
    return "";
  }
}
