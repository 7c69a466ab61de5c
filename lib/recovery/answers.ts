import { REGISTRATION_CHECK_EMAIL, RESET_CHECK_EMAIL, UNLOCK_CHECK_EMAIL, VERIFICATION_CHECK_EMAIL } from "@/lib/ui/messages";

/**
 * The answers that must be the same whether or not an address has an account: one constant
 * each, so no branch can drift from the other.
 */
const checkEmail = (message: string) => Object.freeze({ status: "check_email", message });

export const REGISTRATION_ACCEPTED = checkEmail(REGISTRATION_CHECK_EMAIL);
export const RESET_REQUESTED = checkEmail(RESET_CHECK_EMAIL);
export const VERIFICATION_REQUESTED = checkEmail(VERIFICATION_CHECK_EMAIL);
export const UNLOCK_REQUESTED = checkEmail(UNLOCK_CHECK_EMAIL);
