import { verifyAltcha } from "@/lib/captcha/altcha";
import { levelDue } from "@/lib/captcha/difficulty";
import type { RouteLimits } from "@/lib/http/limited";
import { busy, captchaInvalid, deviceLocked, unavailable, untrustedLocked } from "@/lib/http/refusals";
import { accept, refuse, type OrRefused } from "@/lib/http/refused";
import { truncateAddress } from "@/lib/events/security-events";
import type { NoticeOrigin } from "@/lib/recovery/messages";
import type { LockoutCheck, LockoutPolicy } from "@/lib/lockout/rules";
import { log } from "@/lib/log/logger";
import { logSecurity } from "@/lib/log/security-log";
import type { KnownDevice } from "@/lib/devices/known-devices";
import type { Lane } from "@/lib/password/hash-budget";
import { browserLabel } from "@/lib/sessions/browser-label";
import { verifyCredentials } from "@/lib/users/accounts";
import type { PasswordOutcome, SignInAdmission } from "./admission";
import type { SignInInput } from "./credentials";
import type { Gatehouse } from "./gatehouse";

export type Admitted<T> = OrRefused<{ value: T; admission: SignInAdmission }>;

/** What a sign-in route read: the sign-in fields and the device token it was sent, if any. */
export type SignInRequest = SignInInput & { deviceToken?: string | undefined };

/**
 * Whose failures an attempt counts toward and what refuses it: a known device has its own lock
 * and the trusted lane of the hash budget; everyone else shares the username's lock (OWASP
 * device cookies).
 */
type Subject = { lane: Lane; key: string; policy: LockoutPolicy; refuse(check: Extract<LockoutCheck, { locked: true }>): Response };

function subjectOf(gate: Gatehouse, admission: Pick<SignInAdmission, "email" | "device">): Subject {
  if (admission.device) {
    return { lane: "trusted", key: gate.deviceLockKey(admission.device.id), policy: gate.deviceLockoutPolicy, refuse: deviceLocked };
  }
  return { lane: "untrusted", key: gate.usernameKey(admission.email), policy: gate.lockoutPolicy, refuse: untrustedLocked };
}

/**
 * The cheap layers of a password sign-in, in order, shared by the browser sign-in and the token
 * endpoint. The route's wrapper has already applied the per-address limit (before the body);
 * here come the body, the per-username limit, the ALTCHA proof of work, the device cookie and a
 * first look at the lockout. What passes gets an admission: the only thing checkPassword accepts.
 */
export async function admitSignIn<T extends SignInRequest>(
  limits: RouteLimits,
  readInput: () => Promise<OrRefused<{ value: T }>>,
): Promise<Admitted<T>> {
  const { gate, client } = limits;
  const input = await readInput();
  if (!input.ok) return input;
  const { email, password, altcha, deviceToken } = input.value;

  const byUsername = await limits.limit("addressAndUsername", email);
  if (byUsername) return refuse(byUsername);

  // A forged, expired, revoked or another username's token is no token: an untrusted client.
  // (The MAC is checked first, so only a token this server signed costs a database read.)
  let device = await gate.devices.recognise(deviceToken, gate.usernameKey(email), gate.clock());

  // The proof of work must be as hard as this address's recent failures and the budget's pressure
  // call for (lib/captcha/difficulty.ts), unless the client is a known device of this very account.
  const minLevel = levelDue({
    budgetPressure: gate.hashBudget.recentPressure(),
    addressFailures: gate.addressFailures.get(client.key) ?? 0,
    knownDevice: device !== null,
  });
  const captcha = await verifyAltcha(altcha, gate.altcha, gate.replays, gate.clock(), minLevel);
  if (!captcha.ok) {
    logSecurity(gate, { route: limits.path, outcome: "captcha_invalid", client, email, detail: captcha.reason });
    return refuse(captchaInvalid(captcha));
  }

  if (device) device = await claimLane(limits, email, device);
  // Refuses a locked subject before it queues for the hash budget; checkPassword decides again.
  const subject = subjectOf(gate, { email, device });
  const lockout = await gate.lockouts.check(subject.key, gate.clock(), subject.policy);
  if (lockout.locked) {
    if (device) await gate.devices.release(device.id);
    logSecurity(gate, { route: limits.path, outcome: "locked", client, email, detail: subject.lane });
    return refuse(subject.refuse(lockout));
  }

  return accept({
    value: input.value,
    admission: gate.admissions.issue({ email, password, client, device, route: limits.path, userAgent: limits.userAgent }),
  });
}

// Long enough for a queued check and Argon2id; a request that dies frees the device after it.
const DEVICE_CLAIM_MS = 30_000;

/**
 * The owner's lane is for owners: a username gets it a few times an hour (knownDeviceLane), and
 * a device serves one sign-in at a time, so neither self-registered accounts nor a copied
 * token can fill the trusted slots. Declined, the attempt goes on as an untrusted client's.
 */
async function claimLane(limits: RouteLimits, email: string, device: KnownDevice): Promise<KnownDevice | null> {
  const { gate } = limits;
  const lane = await gate.limiter.consume("knownDeviceLane", [gate.usernameKey(email)]);
  if (!lane.allowed || !(await gate.devices.claim(device.id, gate.clock(), DEVICE_CLAIM_MS))) {
    log().info({ event: "device_lane_declined", reason: lane.allowed ? "device_in_use" : "lane_limit" });
    return null;
  }
  return device;
}

/**
 * The one function that runs Argon2id for a sign-in (next-auth's authorize() and the token
 * endpoint both call it). It needs an unused admission from this process's desk; inside a
 * hash-budget slot of its lane it admits the attempt against its subject's lockout atomically
 * (counting it before the verification, so parallel guesses cannot all pass a check none has
 * counted yet), then verifies. A success issues a new device token in place of the old one.
 */
export async function checkPassword(gate: Gatehouse, admission: SignInAdmission): Promise<PasswordOutcome> {
  if (!gate.admissions.take(admission)) {
    log().error({ event: "password_check_refused", reason: "no_admission" });
    return { ok: false, refusal: null };
  }
  let outcome: PasswordOutcome | undefined;
  try {
    outcome = await checkAdmitted(gate, admission);
  } catch (error) {
    // next-auth would put the message in its error URL, and the token route would answer 500.
    log().error({ event: "password_check_failed", err: error instanceof Error ? error.message : String(error) });
    logSecurity(gate, { route: admission.route, outcome: "unavailable", client: admission.client, email: admission.email });
    outcome = { ok: false, refusal: unavailable() };
  }
  // Whatever happened short of a success (which replaced the device), the device is free again.
  if (!outcome.ok && admission.device) await gate.devices.release(admission.device.id).catch(() => {});
  return outcome;
}

async function checkAdmitted(gate: Gatehouse, admission: SignInAdmission): Promise<PasswordOutcome> {
  const { email, password, client, device, route } = admission;
  const browser = browserLabel(admission.userAgent);
  const subject = subjectOf(gate, admission);
  return gate.hashBudget.run(
    async (): Promise<PasswordOutcome> => {
      const attempt = await gate.lockouts.admitAttempt(subject.key, gate.clock(), subject.policy);
      if (!attempt.allowed) {
        logSecurity(gate, { route, outcome: "locked", client, email, detail: subject.lane });
        return { ok: false, refusal: subject.refuse(attempt.check) };
      }

      const endTimer = gate.metrics.passwordCheckSeconds.startTimer();
      const user = await verifyCredentials(gate.prisma, { email, password }, gate.argon2, (error) =>
        log().warn({ event: "password_rehash_failed", err: error instanceof Error ? error.message : String(error) }),
      );
      endTimer();
      // An account whose address is not confirmed yet fails exactly like a wrong password, even
      // for the right one: registration sets the password of a free address only, so any other
      // answer would tell whoever just registered it that the address had no account. Its owner
      // gets the link again (within the recovery-mail quota).
      const unverified = user !== null && !user.emailVerified && gate.config.REQUIRE_EMAIL_VERIFICATION === "true";
      if (!user || unverified) {
        if (user && unverified) gate.recovery.verificationNeeded(user);
        if (attempt.state.lockedUntilMs !== null) gate.metrics.lockoutsStarted.inc({ lane: subject.lane });
        // Already counted by admitAttempt, whether or not the account exists.
        gate.addressFailures.set(client.key, (gate.addressFailures.get(client.key) ?? 0) + 1);
        log().info({
          event: "sign_in_failed",
          lane: subject.lane,
          failureCount: attempt.state.failureCount,
          locked: attempt.state.lockedUntilMs !== null,
          ...(unverified ? { emailUnverified: true } : {}),
        });
        logSecurity(gate, { route, outcome: "sign_in_failed", client, email, detail: subject.lane });
        const capped = subject.policy.capFailures === attempt.state.failureCount;
        await gate.events.signInFailed(email, client, attempt.state, capped && !device, { browser });
        // The failure that starts a lock episode for strangers tells the owner (if the username
        // has an account) and offers a way past it; later failures of the episode do not.
        if (!device && attempt.state.failureCount === subject.policy.threshold)
          gate.recovery.lockedOut(email, noticeOrigin(gate, admission));
        // A device that keeps failing is more likely stolen than mistyped on: at the cap it is revoked.
        if (device && capped) await gate.devices.forget(device.id);
        return { ok: false, refusal: null };
      }
      const usernameKey = gate.usernameKey(email);
      if (device) {
        await gate.lockouts.reset(subject.key);
        await gate.devices.forget(device.id);
        // Strangers stay locked out while the owner signs in, except NIST's cap, which lasts
        // only until the owner signs in from a known device.
        const strangers = await gate.lockouts.check(usernameKey, gate.clock(), gate.lockoutPolicy);
        if (strangers.locked && strangers.capped) await gate.lockouts.reset(usernameKey);
      } else {
        await gate.lockouts.reset(usernameKey);
      }
      const issued = await gate.devices.issue(usernameKey, gate.clock());
      log().info({ event: "sign_in_succeeded", lane: subject.lane, userId: user.id, rehashed: user.rehashed });
      logSecurity(gate, { route, outcome: "sign_in_succeeded", client, email, detail: subject.lane, userId: user.id });
      await gate.events.signInSucceeded(user.id, client, { browser, sessionId: admission.sessionId });
      if (!device) gate.recovery.notice("new_device_sign_in", user, noticeOrigin(gate, admission));
      return {
        ok: true,
        user: { id: user.id, email: user.email, credentialGeneration: user.credentialGeneration },
        device: { token: issued.token, expiresAtMs: issued.expiresAtMs },
      };
    },
    (): PasswordOutcome => {
      logSecurity(gate, { route, outcome: "busy", client, email, detail: subject.lane });
      return { ok: false, refusal: busy() };
    },
    subject.lane,
  );
}

/** Where a sign-in came from, as an email to the owner tells it (the account page's words). */
export function noticeOrigin(gate: Gatehouse, from: { client: { address: string }; userAgent: string | null }): NoticeOrigin {
  return { browser: browserLabel(from.userAgent), address: truncateAddress(from.client.address), atMs: gate.clock() };
}
