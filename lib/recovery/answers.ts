/**
 * The answers that must be the same whether or not an address has an account: one constant
 * each, so no branch can drift from the other.
 */
export const REGISTRATION_ACCEPTED = Object.freeze({
  status: "check_email",
  message: "Check your email: we sent a message to that address with the next step.",
});

export const RESET_REQUESTED = Object.freeze({
  status: "check_email",
  message: "If an account uses that address, we sent it a link to choose a new password. It works for a short time, once.",
});

/** Every way an emailed link can be bad, told alike: which one it was is nobody's business. */
export const LINK_INVALID_MESSAGE = "This link has expired or was already used. Ask for a new one.";
