/**
 * The pages an emailed link opens, one entry per purpose: what the page's one component
 * (EmailLinkPage, EmailLinkForm) does differently for each. Their words are in the `recovery`
 * catalogue: `recovery.link` for all, `recovery.<purpose>` for each.
 */
export const EMAIL_LINKS = {
  reset: {
    /** The API route that uses the link. */
    endpoint: "/api/password/reset",
    /** The no-script route the form posts to before hydration (it only redirects back). */
    noScriptForm: "reset-password",
    /** Where the sign-in page says what happened. */
    done: "reset",
    /** The reset page asks for a new password; the verification page for the one chosen at registration. */
    password: "new",
    /** Names the link's account (masked) before the button is pressed; reading it spends nothing. The reset's also says whether the account keeps another factor and has a passkey. */
    preview: "/api/password/reset/preview",
    /** The right password may be followed by the account's second step (the link signs in). */
    secondStep: false,
    /** Paragraphs said above the form, keys of `recovery.<purpose>`. */
    intro: [],
  },
  verify: {
    endpoint: "/api/email/verify",
    noScriptForm: "verify-email",
    done: "verified",
    password: "current",
    /** Says whether the address is already confirmed (an old email): then the page offers sign-in, no password form. */
    preview: "/api/email/verify/preview",
    secondStep: true,
    intro: [],
  },
  unlock: {
    endpoint: "/api/unlock",
    noScriptForm: "unlock",
    done: "unlocked",
    password: undefined,
    preview: "/api/unlock/preview",
    secondStep: false,
    intro: ["paused", "explain"],
  },
} as const;

export type EmailLinkPurpose = keyof typeof EMAIL_LINKS;
