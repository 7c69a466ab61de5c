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
  // A change of address: the new address confirms it; the old one undoes it ("This wasn't me").
  changeEmail: {
    endpoint: "/api/email-change/confirm",
    noScriptForm: "confirm-email-change",
    done: "email_changed",
    password: undefined,
    preview: undefined,
    secondStep: false,
    intro: ["explain"],
  },
  // "This wasn't me" from the new-device mail: ends that sign-in; the page names no account.
  notMe: {
    endpoint: "/api/not-me",
    noScriptForm: "not-me",
    done: "not_me",
    password: undefined,
    preview: undefined,
    secondStep: false,
    intro: ["explain"],
  },
  undoEmailChange: {
    endpoint: "/api/email-change/undo",
    noScriptForm: "undo-email-change",
    done: "email_change_undone",
    password: undefined,
    preview: undefined,
    secondStep: false,
    intro: ["explain"],
  },
} as const;

export type EmailLinkPurpose = keyof typeof EMAIL_LINKS;
