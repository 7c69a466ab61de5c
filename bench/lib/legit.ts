import { getChallenge, signIn, solvedCounter, type Csrf, type SignInOutcome } from "./http";
import { fmt, sleep, summarize } from "./stats";
import { solve } from "@/tests/helpers/altcha";

/**
 * Legitimate users of the HTTP drills: people who know their password and sign in the way the
 * sign-in page does it (challenge, solve, post), on a known device or a new one.
 */

/** How an answer is listed in the tables. */
export function answerLabel(outcome: SignInOutcome): string {
  switch (outcome.kind) {
    case "signed-in":
      return "200 signed in";
    case "invalid":
      return "401 wrong password (after Argon2id)";
    case "captcha_invalid":
      return `400 captcha_invalid (${outcome.reason ?? "?"})`;
    case "busy":
      return "503 busy (hash budget full)";
    case "locked":
      return `429 locked (Retry-After ${outcome.retryAfterSeconds ?? "?"} s${outcome.lockedUntil ? ", with lockedUntil" : ""})`;
    case "server_error":
      return `${outcome.status} server error`;
    case "other":
      return outcome.status === 200 && outcome.reason?.includes("csrf=true")
        ? "200 sent back to the sign-in page by next-auth (?csrf=true)"
        : `${outcome.status} ${outcome.reason ?? "unexpected"}`;
    default:
      return `${outcome.status} ${outcome.kind}`;
  }
}

/** "label: n; label: n", most frequent first. */
export function tally(labels: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([label, n]) => `${label}: ${fmt.int(n)}`)
    .join("; ");
}

export type LegitUser = {
  /** How the user is named in the tables. */
  label: string;
  email: string;
  password: string;
  /** The client address of the user's n-th sign-in. */
  address(n: number): string;
  /** Sign-ins started so far: the next one's n. */
  started: number;
  /**
   * True: a known device, which presents its newest device token and keeps the new one from each
   * success (the old one is revoked). False: a new device every time (no cookie kept).
   */
  knownDevice: boolean;
  deviceToken?: string;
};

export function legitUser(label: string, email: string, password: string, knownDevice: boolean, address: (n: number) => string): LegitUser {
  return { label, email, password, address, started: 0, knownDevice };
}

export type LegitSignIn = {
  /** performance.now() when the sign-in began. */
  startedMs: number;
  /** Challenge, solve, post and any retries, until the last answer. */
  totalMs: number;
  /** The first post's time to the server's answer, whatever it was. */
  firstPostMs: number;
  tries: number;
  /** Labels of the answers that were tried again. */
  setbacks: string[];
  /** Label of the last answer. */
  outcome: string;
  kind: SignInOutcome["kind"];
  signedIn: boolean;
  /** Counters the proof of work found, one per try (the challenge's size shows in them). */
  counters: number[];
  /** Whether a known device got a new device token from its success. */
  rotated: boolean;
};

/**
 * One sign-in as the page does it: challenge, solve, post. After a 503 the page counts down
 * Retry-After and the user tries again; after any other failure that is not a refusal of the
 * user (a 500, a bounce back to the sign-in page) the user is assumed to try again a second later.
 * A lock or rate-limit refusal ends the sign-in: the page then asks for minutes, not seconds.
 * Bounded by `maxTries`. Tries again from the same address.
 */
export async function legitSignIn(baseUrl: string, csrf: Csrf, user: LegitUser, maxTries: number): Promise<LegitSignIn> {
  const startedMs = performance.now();
  const address = user.address(user.started++);
  let firstPostMs = Number.NaN;
  const setbacks: string[] = [];
  const counters: number[] = [];
  for (let tries = 1; ; tries++) {
    const deviceToken = user.knownDevice ? user.deviceToken : undefined;
    const altcha = await solve(await getChallenge(baseUrl, address, deviceToken));
    counters.push(solvedCounter(altcha));
    const outcome = await signIn(baseUrl, { address, csrf, email: user.email, password: user.password, altcha, deviceToken });
    if (tries === 1) firstPostMs = outcome.ms;
    const signedIn = outcome.kind === "signed-in";
    const rotated = signedIn && user.knownDevice && outcome.deviceToken !== undefined && outcome.deviceToken !== deviceToken;
    if (rotated) user.deviceToken = outcome.deviceToken;
    const retryable =
      outcome.kind === "busy" || outcome.kind === "server_error" || outcome.kind === "other" || outcome.kind === "csrf_invalid";
    if (!retryable || tries >= maxTries) {
      return {
        startedMs,
        totalMs: performance.now() - startedMs,
        firstPostMs,
        tries,
        setbacks,
        outcome: answerLabel(outcome),
        kind: outcome.kind,
        signedIn,
        counters,
        rotated,
      };
    }
    setbacks.push(answerLabel(outcome));
    await sleep((outcome.retryAfterSeconds || 1) * 1000);
  }
}

/**
 * Up to `count` sign-ins of one user, one after another, the first after `delayMs`, the n-th
 * `paceMs` × n after the first (or when the previous one ends, if later), until `stop()` says so.
 */
export async function pacedSignIns(
  baseUrl: string,
  csrf: Csrf,
  user: LegitUser,
  options: { count: number; paceMs: number; maxTries: number; delayMs?: number; stop?: () => boolean },
): Promise<LegitSignIn[]> {
  const runs: LegitSignIn[] = [];
  const firstMs = performance.now() + (options.delayMs ?? 0);
  for (let n = 0; n < options.count && !options.stop?.(); n++) {
    await sleep(firstMs + n * options.paceMs - performance.now());
    if (options.stop?.()) break;
    runs.push(await legitSignIn(baseUrl, csrf, user, options.maxTries));
  }
  return runs;
}

export type LegitSummary = {
  runs: number;
  signedIn: number;
  firstTry: number;
  postP50: number;
  postP99: number;
  totalP50: number;
  totalP99: number;
  /** Every answer the user got, retries included. */
  answers: string;
  /** Mean counter the proof of work found ÷ what the base size asks on average. */
  powFactor: number;
  notRotated: number;
};

/** `baseMaxCounter`: the server's ALTCHA_MAX_COUNTER; a challenge's secret number is uniform in [max/10, max]. */
export function summarizeLegit(runs: readonly LegitSignIn[], baseMaxCounter: number): LegitSummary {
  const post = summarize(runs.map((run) => run.firstPostMs));
  // "Until signed in" counts only sign-ins that ended signed in.
  const total = summarize(runs.filter((run) => run.signedIn).map((run) => run.totalMs));
  const counters = runs.flatMap((run) => run.counters).filter(Number.isFinite);
  const baseMean = (Math.max(1, Math.floor(baseMaxCounter / 10)) + baseMaxCounter) / 2;
  return {
    runs: runs.length,
    signedIn: runs.filter((run) => run.signedIn).length,
    firstTry: runs.filter((run) => run.signedIn && run.tries === 1).length,
    postP50: post.p50,
    postP99: post.p99,
    totalP50: total.p50,
    totalP99: total.p99,
    answers: tally(runs.flatMap((run) => [...run.setbacks, run.outcome])),
    powFactor: counters.length === 0 ? Number.NaN : summarize(counters).mean / baseMean,
    notRotated: runs.filter((run) => run.signedIn && !run.rotated).length,
  };
}
