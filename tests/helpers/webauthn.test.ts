import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
  type WebAuthnCredential,
} from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import { describe, expect, it } from "vitest";
import { softAuthenticator } from "./webauthn";

// These tests pin the soft authenticator to what @simplewebauthn/server accepts and refuses, so Gatehouse tests built on it
// fail for Gatehouse's reasons and not the helper's.
const origin = "http://localhost:3999";
const rpID = "localhost";

async function registrationOptions() {
  return generateRegistrationOptions({
    rpName: "Gatehouse",
    rpID,
    userName: "ada@example.test",
    attestationType: "none",
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
}

async function verifyRegistration(response: RegistrationResponseJSON, challenge: string) {
  return verifyRegistrationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: origin,
    expectedRPID: rpID,
    requireUserVerification: true,
  });
}

/** Registers a passkey and returns what the server would store for it. */
async function enrolled(authenticator: ReturnType<typeof softAuthenticator>) {
  const options = await registrationOptions();
  const { response, passkey } = await authenticator.register(options);
  const verification = await verifyRegistration(response, options.challenge);
  if (!verification.verified) throw new Error("registration not verified");
  const { id, publicKey, counter, transports } = verification.registrationInfo.credential;
  const credential: WebAuthnCredential = { id, publicKey, counter, transports };
  return { options, passkey, credential, registrationInfo: verification.registrationInfo };
}

async function verifyAuthentication(response: AuthenticationResponseJSON, challenge: string, credential: WebAuthnCredential) {
  return verifyAuthenticationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: origin,
    expectedRPID: rpID,
    credential,
    requireUserVerification: true,
  });
}

describe("softAuthenticator registration", () => {
  it("produces an attestation the library verifies, with UV, for a discoverable ES256 credential", async () => {
    const authenticator = softAuthenticator({ origin });
    const { options, passkey, registrationInfo } = await enrolled(authenticator);

    expect(registrationInfo.fmt).toBe("none");
    expect(registrationInfo.aaguid).toBe("00000000-0000-0000-0000-000000000000");
    expect(registrationInfo.userVerified).toBe(true);
    expect(registrationInfo.origin).toBe(origin);
    expect(registrationInfo.rpID).toBe(rpID);
    expect(registrationInfo.credentialDeviceType).toBe("singleDevice");
    expect(registrationInfo.credentialBackedUp).toBe(false);
    expect(registrationInfo.credential.id).toBe(passkey.credentialId);
    expect(registrationInfo.credential.counter).toBe(0);
    expect(registrationInfo.credential.transports).toEqual(["internal"]);
    expect(isoBase64URL.toBuffer(passkey.credentialId)).toHaveLength(32);
    expect(passkey.userHandle).toBe(options.user.id);
  });

  it("marks a synced passkey as backed up (multi-device)", async () => {
    const { registrationInfo } = await enrolled(softAuthenticator({ origin, synced: true }));
    expect(registrationInfo.credentialDeviceType).toBe("multiDevice");
    expect(registrationInfo.credentialBackedUp).toBe(true);
  });

  it("gives each registration a fresh credential ID", async () => {
    const authenticator = softAuthenticator({ origin });
    const first = await enrolled(authenticator);
    const second = await enrolled(authenticator);
    expect(second.passkey.credentialId).not.toBe(first.passkey.credentialId);
  });

  it("refuses options that offer no ES256, as a real authenticator would", async () => {
    const options = await registrationOptions();
    await expect(
      softAuthenticator({ origin }).register({ ...options, pubKeyCredParams: [{ alg: -257, type: "public-key" }] }),
    ).rejects.toThrow(/ES256/);
  });

  it.each([
    { forged: "a foreign origin", overrides: { origin: "https://evil.example" }, error: /origin/ },
    { forged: "a wrong RP ID", overrides: { rpId: "evil.example" }, error: /RP ID/ },
    { forged: "no user verification", overrides: { userVerified: false }, error: /verif/ },
    { forged: "another challenge", overrides: { challenge: isoBase64URL.fromUTF8String("stale") }, error: /challenge/ },
  ])("is rejected by the library with $forged", async ({ overrides, error }) => {
    const options = await registrationOptions();
    const { response } = await softAuthenticator({ origin }).register(options, overrides);
    await expect(verifyRegistration(response, options.challenge)).rejects.toThrow(error);
  });
});

describe("softAuthenticator authentication", () => {
  it("produces assertions the library verifies, with the counter going up each time", async () => {
    const authenticator = softAuthenticator({ origin });
    const { options: creation, passkey, credential } = await enrolled(authenticator);

    for (const expectedCounter of [1, 2]) {
      const options = await generateAuthenticationOptions({ rpID, userVerification: "required" });
      const response = await authenticator.authenticate(passkey, options);
      const verification = await verifyAuthentication(response, options.challenge, credential);

      expect(verification.verified).toBe(true);
      expect(verification.authenticationInfo.credentialID).toBe(passkey.credentialId);
      expect(verification.authenticationInfo.newCounter).toBe(expectedCounter);
      expect(verification.authenticationInfo.userVerified).toBe(true);
      expect(response.response.userHandle).toBe(creation.user.id);
      expect(passkey.counter).toBe(expectedCounter);
      credential.counter = verification.authenticationInfo.newCounter;
    }
  });

  it("keeps a synced passkey's counter at 0, which the library still accepts", async () => {
    const authenticator = softAuthenticator({ origin, synced: true });
    const { passkey, credential } = await enrolled(authenticator);

    for (let attempt = 0; attempt < 2; attempt++) {
      const options = await generateAuthenticationOptions({ rpID, userVerification: "required" });
      const verification = await verifyAuthentication(await authenticator.authenticate(passkey, options), options.challenge, credential);
      expect(verification.verified).toBe(true);
      expect(verification.authenticationInfo.newCounter).toBe(0);
      expect(verification.authenticationInfo.credentialBackedUp).toBe(true);
    }
    expect(passkey.counter).toBe(0);
  });

  it("falls back to the origin's hostname when the options name no RP ID", async () => {
    const authenticator = softAuthenticator({ origin });
    const { passkey, credential } = await enrolled(authenticator);
    // The library always fills in rpId, so take it out the way an RP that omits it would send the options.
    const options = { ...(await generateAuthenticationOptions({ rpID, userVerification: "required" })), rpId: undefined };
    expect(options.rpId).toBeUndefined();

    const verification = await verifyAuthentication(await authenticator.authenticate(passkey, options), options.challenge, credential);
    expect(verification.authenticationInfo.rpID).toBe(rpID);
  });

  it("leaves the user handle out when told to", async () => {
    const authenticator = softAuthenticator({ origin });
    const { passkey } = await enrolled(authenticator);
    const options = await generateAuthenticationOptions({ rpID });
    const response = await authenticator.authenticate(passkey, options, { userHandle: null });
    expect(response.response).not.toHaveProperty("userHandle");
  });

  it.each([
    { forged: "a foreign origin", overrides: { origin: "https://evil.example" }, error: /origin/ },
    { forged: "a wrong RP ID", overrides: { rpId: "evil.example" }, error: /RP ID/ },
    { forged: "no user verification", overrides: { userVerified: false }, error: /verif/ },
    { forged: "a replayed challenge", overrides: { challenge: isoBase64URL.fromUTF8String("replayed") }, error: /challenge/ },
  ])("is rejected by the library with $forged", async ({ overrides, error }) => {
    const authenticator = softAuthenticator({ origin });
    const { passkey, credential } = await enrolled(authenticator);
    const options = await generateAuthenticationOptions({ rpID, userVerification: "required" });
    const response = await authenticator.authenticate(passkey, options, overrides);
    await expect(verifyAuthentication(response, options.challenge, credential)).rejects.toThrow(error);
  });

  it.each([
    { forged: "a lower counter", counter: 1 },
    { forged: "the same counter again", counter: 2 },
  ])("is rejected by the library with $forged, as a cloned authenticator's would be", async ({ counter }) => {
    const authenticator = softAuthenticator({ origin });
    const { passkey, credential } = await enrolled(authenticator);
    for (let attempt = 0; attempt < 2; attempt++) {
      const options = await generateAuthenticationOptions({ rpID, userVerification: "required" });
      const verification = await verifyAuthentication(await authenticator.authenticate(passkey, options), options.challenge, credential);
      credential.counter = verification.authenticationInfo.newCounter;
    }
    expect(credential.counter).toBe(2);

    const options = await generateAuthenticationOptions({ rpID, userVerification: "required" });
    const response = await authenticator.authenticate(passkey, options, { counter });
    await expect(verifyAuthentication(response, options.challenge, credential)).rejects.toThrow(/counter/);
    // An overridden counter is not remembered: the passkey's own count is untouched.
    expect(passkey.counter).toBe(2);
  });
});
