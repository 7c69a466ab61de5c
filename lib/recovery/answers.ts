import { REGISTRATION_CHECK_EMAIL, RESET_CHECK_EMAIL } from "@/lib/ui/messages";

/**
 * The answers that must be the same whether or not an address has an account: one constant
 * each, so no branch can drift from the other.
 */
export const REGISTRATION_ACCEPTED = Object.freeze({
  status: "check_email",
  message: REGISTRATION_CHECK_EMAIL,
});

export const RESET_REQUESTED = Object.freeze({
  status: "check_email",
  message: RESET_CHECK_EMAIL,
});
