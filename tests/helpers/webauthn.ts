import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, type JsonWebKey } from "node:crypto";
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { cose, isoCBOR } from "@simplewebauthn/server/helpers";

/** What a software authenticator keeps per credential. Plain JSON, so a test can hand it across processes. */
export type SoftPasskey = {
  /** base64url */
  credentialId: string;
  /** base64url; options.user.id from registration, returned on every assertion as a discoverable credential does */
  userHandle: string | null;
  /** The authenticator's signature counter after its last ceremony; stays 0 for a synced passkey. */
  counter: number;
  /** P-256 private key (kty EC, with d) */
  privateKeyJwk: JsonWebKey;
};

type SoftAuthenticatorOptions = {
  origin: string;
  /** Used when the ceremony options name no RP ID; defaults to the origin's hostname. */
  rpId?: string;
  /** Like iCloud Keychain or Google Password Manager: counter stays 0, backup eligible (BE) and backed up (BS). */
  synced?: boolean;
};

type CeremonyOverrides = { origin?: string; rpId?: string; userVerified?: boolean; challenge?: string };

// Authenticator data flag bits (WebAuthn §6.1).
const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_BACKUP_ELIGIBLE = 0x08;
const FLAG_BACKED_UP = 0x10;
const FLAG_ATTESTED_CREDENTIAL_DATA = 0x40;

const CREDENTIAL_ID_BYTES = 32;
// Attestation "none" carries no authenticator model, so the AAGUID is all zeros.
const AAGUID_NONE = new Uint8Array(16);

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

function sha256(data: Uint8Array | string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

function concatBytes(...parts: Uint8Array[]): Uint8Array {
  // Copied out of Buffer.concat, whose result can be a view into Node's shared pool rather than its own ArrayBuffer.
  return new Uint8Array(Buffer.concat(parts));
}

function uint32BigEndian(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

function uint16BigEndian(value: number): Uint8Array {
  const bytes = new Uint8Array(2);
  new DataView(bytes.buffer).setUint16(0, value);
  return bytes;
}

function clientDataJSON(type: "webauthn.create" | "webauthn.get", challenge: string, origin: string, crossOrigin = false): Uint8Array {
  return new Uint8Array(Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin })));
}

/** A software passkey store that answers navigator.credentials.create()/get() the way a platform authenticator would. */
export function softAuthenticator(options: SoftAuthenticatorOptions) {
  const synced = options.synced ?? false;

  function rpIdFor(overrides: CeremonyOverrides | undefined, requested: string | undefined): string {
    // The RP's own choice wins, as in a browser; when it leaves the RP ID out, the browser uses the origin's effective domain.
    return overrides?.rpId ?? requested ?? options.rpId ?? new URL(options.origin).hostname;
  }

  function flagsFor(userVerified: boolean, attested: boolean): number {
    let flags = FLAG_USER_PRESENT;
    if (userVerified) flags |= FLAG_USER_VERIFIED;
    if (synced) flags |= FLAG_BACKUP_ELIGIBLE | FLAG_BACKED_UP;
    if (attested) flags |= FLAG_ATTESTED_CREDENTIAL_DATA;
    return flags;
  }

  return {
    /** Answers navigator.credentials.create() for these options: a discoverable ES256 (P-256) credential, attestation "none", UP+UV flags, AT flag. */
    async register(
      creationOptions: PublicKeyCredentialCreationOptionsJSON,
      overrides?: { origin?: string; rpId?: string; userVerified?: boolean; challenge?: string },
    ): Promise<{ response: RegistrationResponseJSON; passkey: SoftPasskey }> {
      // A real authenticator refuses with NotSupportedError when none of the offered algorithms is one it has.
      if (!creationOptions.pubKeyCredParams.some((param) => param.alg === cose.COSEALG.ES256)) {
        throw new Error("softAuthenticator only makes ES256 credentials, and the options do not offer alg -7");
      }

      const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const publicJwk = publicKey.export({ format: "jwk" });
      if (!publicJwk.x || !publicJwk.y) throw new Error("P-256 public key exported without coordinates");
      const credentialId = new Uint8Array(randomBytes(CREDENTIAL_ID_BYTES));

      const coseKey = new Map<number, number | Uint8Array>([
        [cose.COSEKEYS.kty, cose.COSEKTY.EC2],
        [cose.COSEKEYS.alg, cose.COSEALG.ES256],
        [cose.COSEKEYS.crv, cose.COSECRV.P256],
        // JWK coordinates are fixed-length (32 bytes for P-256), which is what COSE wants too.
        [cose.COSEKEYS.x, new Uint8Array(Buffer.from(publicJwk.x, "base64url"))],
        [cose.COSEKEYS.y, new Uint8Array(Buffer.from(publicJwk.y, "base64url"))],
      ]);

      const registrationCounter = 0;
      const authData = concatBytes(
        sha256(rpIdFor(overrides, creationOptions.rp.id)),
        Uint8Array.of(flagsFor(overrides?.userVerified ?? true, true)),
        uint32BigEndian(registrationCounter),
        AAGUID_NONE,
        uint16BigEndian(credentialId.length),
        credentialId,
        isoCBOR.encode(coseKey),
      );
      const attestationObject = isoCBOR.encode(
        new Map<string, string | Uint8Array | Map<string, string>>([
          ["fmt", "none"],
          // "none" must carry an empty CBOR map here; the library rejects it with any statement inside.
          ["attStmt", new Map<string, string>()],
          ["authData", authData],
        ]),
      );
      const clientData = clientDataJSON(
        "webauthn.create",
        overrides?.challenge ?? creationOptions.challenge,
        overrides?.origin ?? options.origin,
      );

      const id = base64url(credentialId);
      return {
        response: {
          id,
          rawId: id,
          type: "public-key",
          response: {
            clientDataJSON: base64url(clientData),
            attestationObject: base64url(attestationObject),
            transports: ["internal"],
          },
          clientExtensionResults: {},
          authenticatorAttachment: "platform",
        },
        passkey: {
          credentialId: id,
          userHandle: creationOptions.user.id,
          counter: registrationCounter,
          privateKeyJwk: privateKey.export({ format: "jwk" }),
        },
      };
    },

    /**
     * Answers navigator.credentials.get(): signs authenticatorData || SHA-256(clientDataJSON) with the passkey's key (DER ECDSA),
     * counter incremented unless synced. An overridden counter is signed as given and not remembered, so a test can replay a
     * stale count without disturbing the passkey. userHandle null leaves the field out, as a non-discoverable credential does.
     */
    async authenticate(
      passkey: SoftPasskey,
      requestOptions: PublicKeyCredentialRequestOptionsJSON,
      overrides?: {
        origin?: string;
        rpId?: string;
        counter?: number;
        userVerified?: boolean;
        challenge?: string;
        userHandle?: string | null;
        /** An iframe of another origin asked (WebAuthn L3 §7.2). */
        crossOrigin?: boolean;
      },
    ): Promise<AuthenticationResponseJSON> {
      let signCount: number;
      if (overrides?.counter !== undefined) {
        signCount = overrides.counter;
      } else if (synced) {
        signCount = 0;
      } else {
        passkey.counter += 1;
        signCount = passkey.counter;
      }

      const authData = concatBytes(
        sha256(rpIdFor(overrides, requestOptions.rpId)),
        Uint8Array.of(flagsFor(overrides?.userVerified ?? true, false)),
        uint32BigEndian(signCount),
      );
      const clientData = clientDataJSON(
        "webauthn.get",
        overrides?.challenge ?? requestOptions.challenge,
        overrides?.origin ?? options.origin,
        overrides?.crossOrigin,
      );
      // Node signs EC keys as DER-encoded ECDSA by default, the encoding WebAuthn specifies for ES256.
      const signature = sign(
        "sha256",
        concatBytes(authData, sha256(clientData)),
        createPrivateKey({ key: passkey.privateKeyJwk, format: "jwk" }),
      );

      const userHandle = overrides?.userHandle === undefined ? passkey.userHandle : overrides.userHandle;
      return {
        id: passkey.credentialId,
        rawId: passkey.credentialId,
        type: "public-key",
        response: {
          clientDataJSON: base64url(clientData),
          authenticatorData: base64url(authData),
          signature: base64url(signature),
          ...(userHandle === null ? {} : { userHandle }),
        },
        clientExtensionResults: {},
        authenticatorAttachment: "platform",
      };
    },
  };
}
