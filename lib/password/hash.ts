import { inSpan } from "@/lib/tracing/spans";
import { randomBytes } from "node:crypto";
import { hash, parseOptions, verify } from "@node-rs/argon2";

// @node-rs/argon2 declares Algorithm as a const enum, which isolated modules cannot import.
const ARGON2ID = 2;

/**
 * Every password is hashed and checked in NFC, here and only here: one passphrase typed on systems
 * that compose accents differently is one password, and no caller can forget it.
 */
function nfc(password: string): string {
  return password.normalize("NFC");
}

export async function hashPassword(password: string, params: Argon2Params): Promise<string> {
  return hash(nfc(password), {
    algorithm: ARGON2ID,
    memoryCost: params.memoryCostKiB,
    timeCost: params.timeCost,
    parallelism: params.parallelism,
  });
}

/** False for a wrong password and for a hash that cannot be parsed: never throws on bad input. */
export async function verifyPassword(storedHash: string, password: string): Promise<boolean> {
  return verifyExactly(storedHash, nfc(password));
}

/** The string as given, not normalised: only for hashes made before the NFC rule. */
async function verifyExactly(storedHash: string, password: string): Promise<boolean> {
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}

/**
 * True when the stored hash is weaker than the current parameters (or not Argon2id at all),
 * so a successful sign-in should store a fresh hash.
 */
export function needsRehash(storedHash: string, current: Argon2Params): boolean {
  try {
    const stored = parseOptions(storedHash);
    return (
      stored.algorithm !== ARGON2ID ||
      stored.memoryCost < current.memoryCostKiB ||
      stored.timeCost < current.timeCost ||
      stored.parallelism < current.parallelism
    );
  } catch {
    return true;
  }
}

const dummyHashes = new Map<string, Promise<string>>();

/**
 * A hash of a random password made with the current parameters. Verifying against it for an
 * unknown account costs what a real verification costs, so response time does not reveal
 * which accounts exist.
 */
export function dummyHash(params: Argon2Params): Promise<string> {
  const key = JSON.stringify(params);
  let pending = dummyHashes.get(key);
  if (!pending) {
    pending = hashPassword(randomBytes(32).toString("base64url"), params);
    dummyHashes.set(key, pending);
  }
  return pending;
}

/**
 * The password hasher a Gatehouse is built with (createGatehouse's `options.hasher`; Argon2id at
 * its configured parameters by default), in NFC like every hash and check above. Tests inject
 * a counting hasher to see how many verifications a request shape reached.
 */
export type PasswordHasher = {
  readonly params: Argon2Params;
  hash(password: string): Promise<string>;
  /**
   * Whether `password` matches `storedHash` (null: an unknown account, checked against a dummy
   * hash at the same cost). `rehash`: the hash is weaker than the current parameters, or was made
   * from the raw form of a password that is not in NFC; either way a fresh hash should replace it.
   */
  verify(storedHash: string | null, password: string): Promise<{ valid: boolean; rehash: boolean }>;
};

export function argon2Hasher(params: Argon2Params): PasswordHasher {
  return {
    params,
    hash: (password) =>
      inSpan(
        "argon2id hash",
        () => hashPassword(password, params),
        () => "hashed",
      ),
    verify: (storedHash, password) =>
      inSpan(
        "argon2id",
        () => verifyWith(storedHash, password),
        (result) => (result.valid ? "valid" : "invalid"),
      ),
  };

  async function verifyWith(storedHash: string | null, password: string): Promise<{ valid: boolean; rehash: boolean }> {
    const hashToCheck = storedHash ?? (await dummyHash(params));
    if (await verifyPassword(hashToCheck, password)) {
      return { valid: storedHash !== null, rehash: storedHash !== null && needsRehash(storedHash, params) };
    }
    // A hash made from the raw string before the NFC rule still verifies (a second verification,
    // which an unknown account pays too), and is then replaced.
    if (nfc(password) !== password && (await verifyExactly(hashToCheck, password)))
      return { valid: storedHash !== null, rehash: storedHash !== null };
    return { valid: false, rehash: false };
  }
}

/** Argon2id parameters, in one place. */
export type Argon2Params = {
  memoryCostKiB: number;
  timeCost: number;
  parallelism: number;
};

/** OWASP Password Storage Cheat Sheet, minimum for Argon2id: m=19 MiB, t=2, p=1. */
export const OWASP_ARGON2ID: Argon2Params = Object.freeze({ memoryCostKiB: 19_456, timeCost: 2, parallelism: 1 });

/** Far below any safe setting: for unit tests only, refused in production by the config. */
export const TEST_ARGON2ID: Argon2Params = Object.freeze({ memoryCostKiB: 1_024, timeCost: 1, parallelism: 1 });

export function argon2Params(profile: "owasp" | "test"): Argon2Params {
  return profile === "test" ? TEST_ARGON2ID : OWASP_ARGON2ID;
}
