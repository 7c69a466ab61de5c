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
