import { z } from "zod";
import { landingPath, signedInBrowser } from "@/lib/auth/browser-session";
import { typedPasswordField } from "@/lib/auth/credentials";
import { secondStepRequired } from "@/lib/auth/second-step";
import { signInWithPassword } from "@/lib/auth/sign-in";
import { deviceTokenOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";
import { linkSchema, readLinkRequest } from "@/lib/auth/link-requests";

export const dynamic = "force-dynamic";

const verifySchema = linkSchema({
  password: typedPasswordField("Enter the password you chose."),
  callbackUrl: z.string().max(2048).optional(),
});

/** The account page says the address is confirmed (and takes the focus there); any other landing is left as it is. */
function confirmedLanding(path: string): string {
  return path === "/account" ? "/account?notice=email_verified" : path;
}

const NOT_THE_PASSWORD = "That is not the password this account was created with. If you did not create it, ignore the email.";

/**
 * Confirms an account's address from its emailed link (a POST from the link's page: mail scanners
 * open links), with the password the account was registered with, and signs its owner in: one
 * step. The mailbox alone is not enough: otherwise someone who registered another person's
 * address could have that person confirm an account whose password they chose (account
 * pre-hijacking). The password goes through the sign-in corridor (per-username limit, lockout,
 * hash budget, Argon2id); the link stands in for the ALTCHA. A wrong password does not spend the
 * link and counts toward the lockout like any other.
 */
export const POST = limited("/api/email/verify", async (request, limits) => {
  const { gate } = limits;
  // It signs a browser in: no other site may make it do so (login CSRF), whatever the media type.
  const link = await readLinkRequest(request, gate, "verify_email", verifySchema);
  if (!link.ok) return link.response;
  const { token } = link;

  const outcome = await signInWithPassword(
    limits,
    { email: token.email, password: link.fields.password, deviceToken: deviceTokenOf(request, gate.config) },
    { confirms: { linkId: token.id, userId: token.userId } },
  );
  if (outcome.ok === false)
    return outcome.refusal ?? jsonError(400, "invalid_input", NOT_THE_PASSWORD, { fields: { password: NOT_THE_PASSWORD } });
  // The address is confirmed now; the sign-in still waits for the account's second step.
  if (outcome.ok === "second_step") return secondStepRequired(gate, outcome.pending, "browser");

  return signedInBrowser(gate, outcome, limits.client, limits.userAgent, {
    status: "email_verified",
    message: "Your email address is confirmed, and you are signed in.",
    email: token.email,
    redirectTo: confirmedLanding(landingPath(outcome, link.fields.callbackUrl, "/account")),
  });
});
