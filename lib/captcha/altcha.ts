import { inSpan } from "@/lib/tracing/spans";
import { createChallenge, verifySolution, type Challenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/sha";
import { z } from "zod";
import { meetsLevel, type ChallengeTerms, type LevelDue } from "./difficulty";
import type { ReplayStore } from "./replay-store";

export type AltchaSettings = {
  hmacSecret: string;
  expiresSeconds: number;
  /** The solver tries counters from 0 up to a secret random one in [maxCounter/10, maxCounter]. */
  maxCounter: number;
};

const ALGORITHM = "SHA-256";
// Bounds a payload before it is decoded: a real one is a few hundred bytes.
const MAX_PAYLOAD_CHARS = 4_096;

/**
 * `level` (lib/captcha/difficulty.ts), the budget's `pressureLevel` at issue and the issue time
 * travel in the challenge's signed data, so the sign-in can refuse a solution easier than its
 * own situation calls for (one fetched elsewhere, with another account's device cookie, or in a
 * quiet moment and kept for the pressure).
 */
export async function issueChallenge(settings: AltchaSettings, nowMs: number, level = 0, pressureLevel = level): Promise<Challenge> {
  const minCounter = Math.max(1, Math.floor(settings.maxCounter / 10));
  const counter = minCounter + Math.floor(Math.random() * (settings.maxCounter - minCounter + 1));
  return createChallenge({
    algorithm: ALGORITHM,
    cost: 1,
    counter,
    deriveKey,
    expiresAt: Math.floor(nowMs / 1000) + settings.expiresSeconds,
    hmacSignatureSecret: settings.hmacSecret,
    data: { level, pressureLevel, issuedAtMs: nowMs },
  });
}

const payloadSchema = z.object({
  challenge: z.object({
    parameters: z
      .object({
        algorithm: z.literal(ALGORITHM),
        nonce: z.string().max(256),
        salt: z.string().max(256),
        cost: z.number().int().min(1).max(1),
        keyLength: z.number().int().min(1).max(64),
        keyPrefix: z.string().max(256),
        expiresAt: z.number().int(),
      })
      .loose(),
    signature: z.string().min(1).max(256),
  }),
  solution: z
    .object({
      counter: z
        .number()
        .int()
        .min(0)
        .max(2 ** 32 - 1),
      derivedKey: z.string().max(256),
    })
    .loose(),
});

/** A spent solution comes back with the terms its challenge was signed with (its level). */
export type CaptchaOutcome =
  | { ok: true; terms: ChallengeTerms }
  | { ok: false; reason: "missing" | "malformed" | "invalid" | "expired" | "too_easy" | "replayed" | "unavailable" };

/**
 * Verifies an ALTCHA payload (base64 JSON from the widget) and spends it: a solution is
 * accepted once, and only before its challenge expires.
 */
export function verifyAltcha(
  payload: unknown,
  settings: AltchaSettings,
  replays: ReplayStore,
  nowMs: number,
  minLevel: number | LevelDue = 0,
): Promise<CaptchaOutcome> {
  return inSpan(
    "altcha",
    () => verifyUntraced(payload, settings, replays, nowMs, minLevel),
    (outcome) => (outcome.ok ? "ok" : outcome.reason),
  );
}

/** A wall-clock step back this small (an NTP slew's worth) is absorbed rather than refused. */
export const CLOCK_SLACK_MS = 5_000;

async function verifyUntraced(
  payload: unknown,
  settings: AltchaSettings,
  replays: ReplayStore,
  nowMs: number,
  minLevel: number | LevelDue,
): Promise<CaptchaOutcome> {
  if (typeof payload !== "string" || payload === "") return { ok: false, reason: "missing" };
  if (payload.length > MAX_PAYLOAD_CHARS) return { ok: false, reason: "malformed" };
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, "base64").toString("utf8"));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const parsed = payloadSchema.safeParse(decoded);
  if (!parsed.success) return { ok: false, reason: "malformed" };
  const { challenge, solution } = parsed.data;

  const expiresAtMs = challenge.parameters.expiresAt * 1000;
  if (expiresAtMs <= nowMs) return { ok: false, reason: "expired" };
  // Valid for longer than any challenge is issued for: the wall clock stepped back since it was
  // issued, and a store that counts its entries' lives on a clock that did not step (Redis's PX)
  // may have forgotten it was spent. Refused as expired; a new challenge is one request away.
  if (expiresAtMs - nowMs > settings.expiresSeconds * 1000 + CLOCK_SLACK_MS) return { ok: false, reason: "expired" };

  let verified = false;
  try {
    const result = await verifySolution({ challenge, solution, deriveKey, hmacSignatureSecret: settings.hmacSecret });
    if (result.expired) return { ok: false, reason: "expired" };
    verified = result.verified;
  } catch {
    verified = false;
  }
  if (!verified) return { ok: false, reason: "invalid" };
  // Read only now that the signature holds: the level is the server's word, not the client's.
  const terms = termsOf(challenge.parameters);
  const enough = typeof minLevel === "number" ? terms.level >= minLevel : meetsLevel(minLevel, terms, nowMs);
  if (!enough) return { ok: false, reason: "too_easy" };

  // Claimed only once verified, so a forged payload cannot burn someone else's challenge.
  let firstUse: boolean;
  try {
    // Kept past its expiry by the slack: a step back within it cannot outlive the entry either.
    firstUse = await replays.claim(challenge.signature, expiresAtMs + CLOCK_SLACK_MS, nowMs);
  } catch {
    // Without the replay store a solution could be reused: refuse (fail closed) rather than guess.
    return { ok: false, reason: "unavailable" };
  }
  return firstUse ? { ok: true, terms } : { ok: false, reason: "replayed" };
}

/** The signed terms; a challenge from before they were recorded gets no grace for pressure. */
function termsOf(parameters: object): ChallengeTerms {
  const data = (parameters as { data?: Record<string, unknown> }).data ?? {};
  const number = (value: unknown, fallback: number) => (typeof value === "number" && Number.isFinite(value) ? value : fallback);
  return {
    level: number(data.level, 0),
    pressureLevel: number(data.pressureLevel, Number.POSITIVE_INFINITY),
    issuedAtMs: number(data.issuedAtMs, Number.NEGATIVE_INFINITY),
  };
}

export const CAPTCHA_MESSAGES: Record<Exclude<CaptchaOutcome, { ok: true }>["reason"], string> = {
  missing: "The automatic robot check did not run. Try again.",
  malformed: "The robot check could not be read. Try again.",
  invalid: "The robot check failed. Try again.",
  expired: "The robot check expired. Try again.",
  too_easy: "The robot check needs to run again: this network has had many failed sign-ins, or the server is busy.",
  replayed: "That robot check was already used. Try again.",
  unavailable: "The robot check cannot be confirmed right now. Try again in a moment.",
};
