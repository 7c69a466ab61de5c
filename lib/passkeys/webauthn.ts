import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { z } from "zod";
import type { ReplayStore } from "@/lib/captcha/replay-store";
import type { NewPasskey } from "./store";
import { claimChallenge, issueChallenge, type ChallengeCheck, type ChallengePurpose } from "./challenges";

/**
 * The relying party: its id is the host of NEXTAUTH_URL (WebAuthn refuses an IP address, so a
 * local test uses http://localhost:PORT) and its only accepted origin is NEXTAUTH_URL's. A
 * response made on any other origin or for any other RP ID is refused.
 */
export type RelyingParty = { id: string; name: string; origin: string };

export type PasskeySettings = { rp: RelyingParty; challengeSecret: string; challengeLifetimeMs: number; replays: ReplayStore };

export function relyingParty(publicOrigin: string, name: string): RelyingParty {
  return { id: new URL(publicOrigin).hostname, name, origin: publicOrigin };
}

const b64url = z
  .string()
  .max(8_192)
  .regex(/^[A-Za-z0-9_-]*$/);

// Bounded shapes of the browser's JSON, checked before the library decodes anything.
const registrationSchema = z.object({
  id: b64url.min(1).max(1_366),
  rawId: b64url.min(1).max(1_366),
  type: z.literal("public-key"),
  response: z
    .object({
      clientDataJSON: b64url,
      attestationObject: b64url,
      transports: z
        .array(z.string().regex(/^[a-z-]{1,32}$/))
        .max(8)
        .optional(),
    })
    .loose(),
  clientExtensionResults: z.object({}).loose(),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});

const authenticationSchema = z.object({
  id: b64url.min(1).max(1_366),
  rawId: b64url.min(1).max(1_366),
  type: z.literal("public-key"),
  response: z.object({ clientDataJSON: b64url, authenticatorData: b64url, signature: b64url, userHandle: b64url.optional() }).loose(),
  clientExtensionResults: z.object({}).loose(),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});

export type ParsedRegistration = RegistrationResponseJSON;
export type ParsedAuthentication = AuthenticationResponseJSON;

export function parseRegistration(value: unknown): ParsedRegistration | null {
  const parsed = registrationSchema.safeParse(value);
  return parsed.success ? (parsed.data as unknown as RegistrationResponseJSON) : null;
}

export function parseAuthentication(value: unknown): ParsedAuthentication | null {
  const parsed = authenticationSchema.safeParse(value);
  return parsed.success ? (parsed.data as unknown as AuthenticationResponseJSON) : null;
}

/** A form field that carries the browser's credential as JSON text (the account page's forms): parsed and bounded, or null. */
export function credentialField<T>(text: string | undefined, parse: (value: unknown) => T | null): T | null {
  try {
    return parse(JSON.parse(text ?? ""));
  } catch {
    return null;
  }
}

export type CeremonyFailure = { ok: false; reason: Exclude<ChallengeCheck, { ok: true }>["reason"] | "invalid_response" };

/**
 * Runs the library's verification with a challenge check that spends the challenge (the library
 * calls it before it checks the signature). Never throws: a malformed or refused response is a
 * failure with its reason.
 */
async function withChallenge<T>(
  settings: PasskeySettings,
  purpose: ChallengePurpose,
  boundTo: string,
  nowMs: number,
  verify: (expectedChallenge: (challenge: string) => Promise<boolean>) => Promise<T>,
): Promise<{ ok: true; value: T } | CeremonyFailure> {
  let check: ChallengeCheck | undefined;
  const expectedChallenge = async (challenge: string) => {
    const text = Buffer.from(challenge, "base64url").toString("utf8");
    check = await claimChallenge(settings.challengeSecret, settings.replays, text, purpose, boundTo, nowMs);
    return check.ok;
  };
  try {
    const value = await verify(expectedChallenge);
    return { ok: true, value };
  } catch {
    return { ok: false, reason: check && !check.ok ? check.reason : "invalid_response" };
  }
}

/**
 * WebAuthn L3 §7.1 step 10 / §7.2 step 12: an RP that does not expect to be framed refuses
 * `crossOrigin: true` (a ceremony another site's iframe asked for). Checked after the library's
 * checks, so the challenge is spent either way.
 */
function sameOriginOnly<T>(clientDataJSON: string, verified: T): T {
  const clientData = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")) as { crossOrigin?: unknown };
  if (clientData.crossOrigin === true) throw new Error("a cross-origin ceremony");
  return verified;
}

/** Options for adding a passkey to a signed-in account: discoverable, user verification required. */
export async function registrationOptions(
  settings: PasskeySettings,
  user: { id: string; email: string },
  existing: { credentialId: string; transports: string[] }[],
  boundTo: string,
  nowMs: number,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: settings.rp.name,
    rpID: settings.rp.id,
    userName: user.email,
    // The account's id, which names nobody: the authenticator hands it back at sign-in (userHandle).
    userID: new TextEncoder().encode(user.id),
    challenge: issueChallenge(settings.challengeSecret, "register", boundTo, nowMs, settings.challengeLifetimeMs),
    timeout: settings.challengeLifetimeMs,
    attestationType: "none",
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
}

export async function verifyRegistration(
  settings: PasskeySettings,
  response: ParsedRegistration,
  boundTo: string,
  nowMs: number,
): Promise<{ ok: true; passkey: NewPasskey } | CeremonyFailure> {
  const result = await withChallenge(settings, "register", boundTo, nowMs, async (expectedChallenge) =>
    sameOriginOnly(
      response.response.clientDataJSON,
      await verifyRegistrationResponse({
        response,
        expectedChallenge,
        expectedOrigin: settings.rp.origin,
        expectedRPID: settings.rp.id,
        requireUserVerification: true,
      }),
    ),
  );
  if (!result.ok) return result;
  const { verified, registrationInfo } = result.value;
  if (!verified || !registrationInfo) return { ok: false, reason: "invalid_response" };
  const { credential, credentialDeviceType, credentialBackedUp } = registrationInfo;
  return {
    ok: true,
    passkey: {
      credentialId: credential.id,
      publicKey: credential.publicKey,
      signCount: credential.counter,
      transports: credential.transports ?? [],
      deviceType: credentialDeviceType,
      backedUp: credentialBackedUp,
    },
  };
}

/** Options for a sign-in (or a re-authentication) with any passkey of this site: no account named. */
export async function authenticationOptions(
  settings: PasskeySettings,
  purpose: "sign_in" | "reauthenticate" | "second_step",
  boundTo: string,
  nowMs: number,
  allow: { credentialId: string; transports: string[] }[] = [],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: settings.rp.id,
    challenge: issueChallenge(settings.challengeSecret, purpose, boundTo, nowMs, settings.challengeLifetimeMs),
    timeout: settings.challengeLifetimeMs,
    userVerification: "required",
    allowCredentials: allow.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports as never })),
  });
}

/**
 * Verifies an assertion against the stored public key. The signature counter is reported, not
 * judged: passkey-rules.ts's counterVerdict decides (the library is given 0 so that it does not throw
 * first, and a regression can be recorded as what it is).
 */
export async function verifyAuthentication(
  settings: PasskeySettings,
  response: ParsedAuthentication,
  passkey: { credentialId: string; publicKey: Uint8Array; transports: string[]; userId: string },
  purpose: "sign_in" | "reauthenticate" | "second_step",
  boundTo: string,
  nowMs: number,
): Promise<{ ok: true; reportedCount: number } | CeremonyFailure> {
  const result = await withChallenge(settings, purpose, boundTo, nowMs, async (expectedChallenge) =>
    sameOriginOnly(
      response.response.clientDataJSON,
      await verifyAuthenticationResponse({
        response,
        expectedChallenge,
        expectedOrigin: settings.rp.origin,
        expectedRPID: settings.rp.id,
        credential: {
          id: passkey.credentialId,
          publicKey: passkey.publicKey as never,
          counter: 0,
          transports: passkey.transports as never,
        },
        requireUserVerification: true,
      }),
    ),
  );
  if (!result.ok) return result;
  // The account comes from the credential id; a user handle that names another is not this passkey's answer.
  const { userHandle } = response.response;
  if (userHandle !== undefined && userHandle !== Buffer.from(new TextEncoder().encode(passkey.userId)).toString("base64url"))
    return { ok: false, reason: "invalid_response" };
  const { verified, authenticationInfo } = result.value;
  if (!verified || !authenticationInfo.userVerified) return { ok: false, reason: "invalid_response" };
  return { ok: true, reportedCount: authenticationInfo.newCounter };
}
