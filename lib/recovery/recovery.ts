import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { Background } from "@/lib/jobs/jobs";
import type { MailMessage, Mailer } from "@/lib/mail/types";
import type { RateLimiter } from "@/lib/rate-limit/limiter";
import type { EmailTokenPurpose, EmailTokens } from "./email-tokens";
import type { MailBrand } from "@/lib/brand/brand";
import type { I18n } from "@/lib/i18n/i18n";
import { brandedMessages, type NoticeKind, type NoticeOrigin } from "./mails";
import { issueChangeLinks } from "@/lib/users/email-change";
import { issueNotMeLink, type NotMe } from "@/lib/users/not-me";
import { hasPassword } from "@/lib/users/accounts";

export type RecoverySettings = {
  /** The app's public URL (NEXTAUTH_URL): links are built from it, never from a request's Host header. */
  publicUrl: string;
  /** The name, logo, colour and links mails carry (BRAND_*). */
  brand: MailBrand;
  verifyLifetimeMs: number;
  resetLifetimeMs: number;
  unlockLifetimeMs: number;
};

type Account = {
  id: string;
  email: string;
  credentialGeneration: number;
  emailVerifiedAt?: Date | null;
  /** The language the account was created in, and the one it last signed in with (the newer wins). */
  locale?: string | null;
  lastLocale?: string | null;
  /** The owner's time zone, from their browser at registration (validated there). */
  timeZone?: string | null;
};

const ACCOUNT = {
  id: true,
  email: true,
  credentialGeneration: true,
  emailVerifiedAt: true,
  locale: true,
  lastLocale: true,
  timeZone: true,
} as const;

/**
 * A promise of mail as the spool keeps it (JSON) until it is a message: what the request knew,
 * never the link (issued only when the message is rendered, so a retaken promise issues its own).
 */
type MailIntent =
  | { do: "verify_email"; userId: string; unverifiedOnly?: boolean }
  | { do: "verification_requested"; email: string }
  | { do: "address_taken"; email: string }
  | { do: "passkey_start"; email: string }
  | { do: "password_reset"; email: string }
  | { do: "locked_out"; email: string; origin: NoticeOrigin }
  | { do: "unlock_requested"; email: string; origin: NoticeOrigin }
  | {
      do: "device_code";
      userId: string;
      /** The code's window (lib/factors/device-confirmation.ts): the code is made at send time, never spooled. */
      window: number;
      /** The seed the code was made under, by its tag: a promise whose seed was replaced since sends nothing. */
      seedTag: string;
      /** When the pending sign-in that asked ends: the mail says "valid until" it. */
      validUntilMs: number;
      origin: NoticeOrigin;
      resend?: true;
      /** A resend's asking address, by its tag (lib/factors/device-confirmation.ts): its budget pays. */
      askedBy?: string;
    }
  | { do: "notice"; kind: NoticeKind; user: { id: string } | { email: string }; origin: NoticeOrigin; detail?: string }
  | { do: "account_deleted"; account: Account; origin: NoticeOrigin };

type QuotaName =
  | "recoveryMail"
  | "securityNotice"
  | "newDeviceNotices"
  | "deviceCodeMail"
  | "deviceCodeWindow"
  | "deviceCodeFresh"
  | "deviceCodeResendAddress";
/** A quota and the key parts beside the account's id (the mail's kind, unless given). */
type Quota = QuotaName | { policy: QuotaName; key: string[] };

type Send = (quota: Quota | Quota[], account: Account, kind: string, render: () => Promise<MailMessage | null>) => Promise<void>;

const PAGES: Record<EmailTokenPurpose, string> = {
  verify_email: "/verify-email",
  reset_password: "/reset-password",
  unlock: "/unlock",
  new_passkey: "/new-passkey",
};

/**
 * Everything that emails an account's owner. Each entry point writes its promise to the spool,
 * then does its work in the background (look up the account, issue a link, queue the message),
 * so what a request answers, and when, is the same whether the address has an account or not. Unknown addresses
 * get nothing; each kind of email is capped per account, so nobody can use Gatehouse to flood
 * someone's mailbox.
 */
export class Recovery {
  constructor(
    private readonly deps: {
      prisma: PrismaClient;
      tokens: EmailTokens;
      mailer: Mailer;
      limiter: RateLimiter;
      background: Background;
      clock: () => number;
      settings: RecoverySettings;
      /**
       * Whether sign-in to this username is paused for its owner's browser: untrusted clients are
       * locked out now, or failures are counted toward a lock (the per-username limit, which only
       * failures fill, may then refuse the owner's browser after the lock itself has ended).
       */
      isPaused: (email: string) => Promise<boolean>;
      /** The catalogues mails are rendered from, in each account's own language. */
      i18n: I18n;
      /** A message not sent (logged by kind: the account is never named). */
      onSkipped: (kind: string, reason: "quota" | "mail_queue_full") => void;
      /** A window's device code for an account and seed (keyed by the code secret, which this class never holds). */
      windowCode: (userId: string, seed: string, window: number) => string;
      /** A seed's tag (lib/factors/device-confirmation.ts), to tell whether a promise's seed is still the account's. */
      seedTag: (seed: string) => string;
      /** Told of every notice for an existing account, before its mail's quota (the security webhooks). */
      onNotice?: ((kind: NoticeKind, userId: string, origin: NoticeOrigin) => Promise<void>) | undefined;
    },
  ) {}

  /** The messages in the account's language (its last sign-in's, else its creation's, else DEFAULT_LOCALE), with its time zone. */
  private messagesFor(account: Account): ReturnType<typeof brandedMessages> {
    const { i18n } = this.deps;
    const wanted = account.lastLocale ?? account.locale ?? i18n.defaultLocale;
    const locale = i18n.locales.includes(wanted) ? wanted : i18n.defaultLocale;
    return brandedMessages({ brand: this.deps.settings.brand, t: i18n.translator(locale), locale, timeZone: account.timeZone ?? null });
  }

  /** A URL of this app; the token goes in the fragment, which browsers never send to a server or put in Referer. */
  url(path: string, token?: string): string {
    const base = new URL(path, this.deps.settings.publicUrl);
    return token === undefined ? base.toString() : `${base.toString()}#token=${token}`;
  }

  /**
   * Every entry point but notice() writes what it promises to the mail spool before it returns
   * (one row, whether or not the address has an account, so its cost tells nobody anything), then
   * does the rest in the background. A notice is queued in memory, spooled at a clean stop. A caller that awaits it answers only once the promise would
   * survive a kill -9: another instance, or the next start, keeps it (resumeIntent).
   */
  private async promise(intent: MailIntent): Promise<void> {
    // A notice is no answer's promise, and a sign-in from a new device would pay a write for it.
    const heldId = intent.do === "notice" ? null : await this.deps.mailer.hold(intent.do, intent);
    this.deps.background.run(intent.do, () => this.keep(intent, heldId));
  }

  /** A promise of mail another process made and did not keep (it was killed): kept here. */
  resumeIntent(heldId: string, intent: unknown): void {
    this.deps.background.run("mail_intent_resumed", () => this.keep(intent as MailIntent, heldId));
  }

  /** Does what `intent` promised; the held row goes once nothing is left to send, or stays for a retry when this failed. */
  private async keep(intent: MailIntent, heldId: string | null): Promise<void> {
    let sent = false;
    const send: Send = async (policy, account, kind, render) => {
      sent = (await this.send(policy, account, kind, render, heldId)) || sent;
    };
    try {
      await this.perform(intent, send);
    } catch (error) {
      // Not released: its lease runs out and a sweep tries again (a bounded number of times).
      if (heldId !== null && !sent) this.deps.mailer.release(heldId, "retry");
      throw error;
    }
    if (heldId !== null && !sent) this.deps.mailer.release(heldId, "done");
  }

  private async perform(intent: MailIntent, send: Send): Promise<void> {
    switch (intent.do) {
      case "verify_email": {
        const account = await this.byId(intent.userId);
        if (!account || (intent.unverifiedOnly && account.emailVerifiedAt)) return;
        // An account started with a passkey is confirmed by making it ("Send it again" included).
        if (!account.emailVerifiedAt && !(await this.hasPassword(account.id))) return this.passkeyStartMail(account, send);
        return send("recoveryMail", account, "verify_email", async () => {
          const token = await this.issue(account, "verify_email", this.deps.settings.verifyLifetimeMs);
          return this.messagesFor(account).verifyEmail(
            account.email,
            this.url(PAGES.verify_email, token),
            Math.round(this.deps.settings.verifyLifetimeMs / 3_600_000),
          );
        });
      }
      case "verification_requested": {
        const account = await this.find(intent.email);
        if (!account || account.emailVerifiedAt) return;
        return this.perform({ do: "verify_email", userId: account.id, unverifiedOnly: true }, send);
      }
      case "address_taken": {
        const account = await this.find(intent.email);
        if (!account) return;
        return send("recoveryMail", account, "address_taken", async () =>
          this.messagesFor(account).addressTaken(account.email, this.url("/sign-in"), this.url("/forgot-password")),
        );
      }
      case "passkey_start": {
        const account = await this.find(intent.email);
        if (!account) return;
        // Only an account this very flow started (no password, address not yet confirmed) gets the
        // link again; any other owner is told, as registration with a password tells them.
        if (account.emailVerifiedAt || (await this.hasPassword(account.id)))
          return this.perform({ do: "address_taken", email: account.email }, send);
        return this.passkeyStartMail(account, send);
      }
      case "password_reset": {
        const account = await this.find(intent.email);
        if (!account) return;
        // An account with no password recovers with its mailbox and a new passkey (decision 39).
        if (!(await this.hasPassword(account.id)))
          return send("recoveryMail", account, "passkey_recovery", async () => {
            const token = await this.issue(account, "new_passkey", this.deps.settings.resetLifetimeMs);
            return this.messagesFor(account).passkeyRecovery(
              account.email,
              this.url(PAGES.new_passkey, token),
              Math.round(this.deps.settings.resetLifetimeMs / 60_000),
            );
          });
        return send("recoveryMail", account, "password_reset", async () => {
          const token = await this.issue(account, "reset_password", this.deps.settings.resetLifetimeMs);
          return this.messagesFor(account).passwordReset(
            account.email,
            this.url(PAGES.reset_password, token),
            Math.round(this.deps.settings.resetLifetimeMs / 60_000),
          );
        });
      }
      case "locked_out":
      case "unlock_requested": {
        const account = await this.find(intent.email);
        if (!account) return;
        if (intent.do === "unlock_requested" && !(await this.deps.isPaused(account.email))) return;
        const quota = intent.do === "locked_out" ? "securityNotice" : "recoveryMail";
        return send(quota, account, intent.do, async () => {
          const token = await this.issue(account, "unlock", this.deps.settings.unlockLifetimeMs);
          return this.messagesFor(account).lockedOut(
            account.email,
            this.url(PAGES.unlock, token),
            Math.round(this.deps.settings.unlockLifetimeMs / 60_000),
            intent.origin,
          );
        });
      }
      case "device_code": {
        const account = await this.byId(intent.userId);
        // A promise spooled before codes had seeds: its code is not known any more.
        if (!account || typeof intent.window !== "number" || typeof intent.seedTag !== "string") return;
        const seed = await this.deviceCodeSeed(account.id);
        // The code was spent, or guessed at too often, since: it finishes nothing, and a newer
        // pending sign-in mails its own.
        if (seed === null || this.deps.seedTag(seed) !== intent.seedTag) return;
        // The first code mail of a window and seed goes (one each: nobody spends the owner's codes
        // by asking often), within an hourly cap on fresh codes that a stranger replacing the seed
        // with wrong guesses cannot pass. "Resend code" is charged to the asking address, then to
        // the account's ceiling for this code: a stranger spends their own address's resends, and
        // a crowd of addresses at most this code's, which the owner's mailbox then holds; the
        // owner's next code has its own (an attacker's review of record 40).
        const code = ["device_code", String(intent.window), intent.seedTag];
        const quota: Quota[] = intent.resend
          ? [
              { policy: "deviceCodeResendAddress", key: ["device_code", intent.askedBy ?? "unknown"] },
              { policy: "deviceCodeMail", key: code },
            ]
          : [{ policy: "deviceCodeWindow", key: code }, "deviceCodeFresh"];
        return send(quota, account, "device_code", async () =>
          this.messagesFor(account).deviceCode(
            account.email,
            this.deps.windowCode(account.id, seed, intent.window),
            intent.validUntilMs,
            intent.origin,
            this.url("/forgot-password"),
          ),
        );
      }
      case "notice": {
        const { kind, user, origin, detail } = intent;
        const account = "email" in user ? await this.find(user.email) : await this.byId(user.id);
        if (!account) return;
        await this.deps.onNotice?.(kind, account.id, origin);
        const forgotUrl = this.url("/forgot-password");
        const messages = this.messagesFor(account);
        const render = {
          password_breached: messages.passwordBreached,
          new_device_sign_in: messages.newDeviceSignIn,
          password_changed: messages.passwordChanged,
          password_was_reset: messages.passwordWasReset,
          refresh_token_reused: messages.refreshTokenReused,
          passkey_added: messages.passkeyAdded,
          passkey_removed: messages.passkeyRemoved,
          passkey_counter_regressed: messages.passkeyCounterRegressed,
          factor_added: messages.factorAdded,
          factor_removed: messages.factorRemoved,
          recovery_code_used: messages.recoveryCodeUsed,
          recovery_codes_replaced: messages.recoveryCodesReplaced,
          factors_removed_by_operator: messages.factorsRemovedByOperator,
        }[kind];
        return send("securityNotice", account, kind, async () => render(account.email, origin, forgotUrl, detail));
      }
      case "account_deleted": {
        const { account, origin } = intent;
        return send("securityNotice", account, "account_deleted", async () =>
          this.messagesFor(account).accountDeleted(account.email, origin, this.url("/register")),
        );
      }
    }
  }

  /** A new account: a link that verifies its address. */
  accountCreated(account: { id: string }): Promise<void> {
    return this.promise({ do: "verify_email", userId: account.id });
  }

  /** Registration with an address that has an account: its owner is told, and nobody else learns anything. */
  addressTaken(email: string): Promise<void> {
    return this.promise({ do: "address_taken", email });
  }

  /** The right password for an account whose address is not verified yet: a fresh verification link. */
  verificationNeeded(account: { id: string }): Promise<void> {
    return this.accountCreated(account);
  }

  /** "Send it again": a new verification link for an account with this address that is not verified yet, nothing for any other. */
  verificationRequested(email: string): Promise<void> {
    return this.promise({ do: "verification_requested", email });
  }

  /**
   * "Create an account with a passkey": the link that makes the passkey, for an account this flow
   * started; the "you already have an account" mail for any other account; nothing for no account.
   */
  passkeyStartRequested(email: string): Promise<void> {
    return this.promise({ do: "passkey_start", email });
  }

  /** "Forgot password?": a reset link for an account with this address, nothing for any other. */
  resetRequested(email: string): Promise<void> {
    return this.promise({ do: "password_reset", email });
  }

  /** A username just locked for untrusted clients: its owner gets a link that lets one browser past the lock. */
  lockedOut(email: string, origin: NoticeOrigin): Promise<void> {
    return this.promise({ do: "locked_out", email, origin });
  }

  /**
   * "Email me a new link": the same unlock email, for an account whose sign-in is paused now,
   * under the recovery mails' per-account quota (as many a period as the route lets one address
   * ask for one), not the lock notice's one-per-episode: a request the route answers is a link
   * sent, so the page can say so, and its refusal says when the next can be asked for.
   */
  unlockRequested(email: string, origin: NoticeOrigin): Promise<void> {
    return this.promise({ do: "unlock_requested", email, origin });
  }

  /**
   * The window's code for a new device of an account (a right password under attack, or mailbox
   * first): mailed once per window and seed, since every pending sign-in of that window waits for
   * the same code until one is finished with it. "Resend code" (`resend`, naming the asking
   * address by its tag) mails it again within that address's budget and the account's ceiling for
   * the code; past either nothing is sent, and the code already in the owner's mailbox still works.
   */
  deviceCode(
    user: { id: string },
    code: { window: number; seedTag: string; validUntilMs: number },
    origin: NoticeOrigin,
    resend?: { askedBy: string },
  ): Promise<void> {
    return this.promise({
      do: "device_code",
      userId: user.id,
      ...code,
      origin,
      ...(resend ? { resend: true, askedBy: resend.askedBy } : {}),
    });
  }

  /**
   * "New sign-in to your account", with "This wasn't me": a single-use link that ends that sign-in's
   * session (or the app's token family) and forgets its device, living as long as the session can.
   * The link is issued only once the quota lets the mail go, so no link exists that was never sent.
   * The quota is per device (decision 0041): an intruder's new device just after the owner's own is
   * mailed too, each with its own link; the account's hourly cap keeps a flood of them out of the
   * mailbox, and past it the sign-ins are on the account page.
   */
  newDeviceSignIn(user: { id: string }, origin: NoticeOrigin, notMe: NotMe): void {
    this.deps.background.run("new_device_sign_in", async () => {
      const account = await this.byId(user.id);
      if (!account) return;
      await this.deps.onNotice?.("new_device_sign_in", account.id, origin);
      const quotas: Quota[] = [{ policy: "securityNotice", key: ["new_device_sign_in", notMe.deviceId] }, "newDeviceNotices"];
      await this.send(quotas, account, "new_device_sign_in", async () => {
        const token = await issueNotMeLink(this.deps.prisma, account, notMe, this.deps.clock());
        return this.messagesFor(account).newDeviceSignIn(account.email, origin, this.url("/forgot-password"), this.url("/not-me", token));
      });
    });
  }

  /** Something the owner should know happened (coalesced per account and kind). */
  notice(kind: NoticeKind, user: { id: string } | { email: string }, origin: NoticeOrigin, detail?: string): Promise<void> {
    const who = "email" in user ? { email: user.email } : { id: user.id };
    return this.promise({ do: "notice", kind, user: who, origin, ...(detail === undefined ? {} : { detail }) });
  }

  /**
   * "Change email": the new address gets the link that confirms it, the old one is told at once with
   * the link that undoes it (7 days). An address that is another account's gets no link: its owner
   * is told someone tried, and the old address is told as for a free one, so neither the requester
   * nor a reader of the old mailbox learns that the address has an account. All in the background:
   * the request's answer and its time are the same either way.
   */
  emailChangeRequested(userId: string, newEmail: string, sessionId: string, origin: NoticeOrigin): void {
    this.deps.background.run("email_change", async () => {
      const account = await this.byId(userId);
      if (!account || account.email === newEmail) return;
      const owner = await this.find(newEmail);
      const links = await issueChangeLinks(
        this.deps.prisma,
        { userId, from: account.email, to: owner ? null : newEmail, sessionId, credentialGeneration: account.credentialGeneration },
        this.deps.clock(),
        this.deps.settings.verifyLifetimeMs,
      );
      if (owner)
        await this.send("securityNotice", owner, "address_in_use", async () =>
          this.messagesFor(owner).addressInUse(owner.email, this.url("/sign-in")),
        );
      else if (links.confirm)
        // To the new address, in the account's language: it is the account's owner who asked.
        await this.send("recoveryMail", account, "confirm_email_change", async () =>
          this.messagesFor(account).confirmEmailChange(
            newEmail,
            this.url("/confirm-email-change", links.confirm!),
            Math.round(this.deps.settings.verifyLifetimeMs / 3_600_000),
          ),
        );
      await this.send("recoveryMail", account, "email_change_requested", async () =>
        this.messagesFor(account).emailChangeRequested(account.email, this.url("/undo-email-change", links.undo), origin),
      );
    });
  }

  /**
   * The goodbye of an account about to be deleted: read now, while the account exists (its address,
   * language and time zone), and promised by calling the answer once the deletion has committed.
   * Null when there is no account.
   */
  async farewell(userId: string): Promise<((origin: NoticeOrigin) => Promise<void>) | null> {
    const account = await this.byId(userId);
    if (!account) return null;
    return (origin) => this.promise({ do: "account_deleted", account, origin });
  }

  /**
   * Renders and queues one message if the account's quota for its kind allows (null from `render`:
   * nothing to send after all). A full mail queue is checked first: rendering issues a link that
   * replaces the previous one, and a link that is never sent must not kill the one already in the
   * owner's mailbox (nor spend the quota).
   */
  private async send(
    quotas: Quota | Quota[],
    account: Account,
    kind: string,
    render: () => Promise<MailMessage | null>,
    heldId: string | null = null,
  ): Promise<boolean> {
    if (this.deps.mailer.full()) {
      this.deps.onSkipped(kind, "mail_queue_full");
      return false;
    }
    if (!(await this.takeQuotas(Array.isArray(quotas) ? quotas : [quotas], account, kind))) {
      this.deps.onSkipped(kind, "quota");
      return false;
    }
    const message = await render();
    if (!message) return false;
    this.deps.mailer.send(message, heldId ?? undefined);
    return true;
  }

  /**
   * Every quota of one mail, in turn, or none: when one refuses, those taken before it are given
   * back, so a mail that does not go spends nothing (a resend refused by the account's ceiling
   * leaves its address's budget whole; a fresh code refused by the hourly cap leaves its window's
   * one mail to a later sign-in). A count the store did not take is not given back.
   */
  private async takeQuotas(quotas: Quota[], account: Account, kind: string): Promise<boolean> {
    const taken: { policy: QuotaName; key: string[] }[] = [];
    for (const quota of quotas) {
      const { policy, key } = typeof quota === "string" ? { policy: quota, key: [kind] } : quota;
      const counted = await this.deps.limiter.consume(policy, [account.id, ...key]);
      if (!counted.allowed) {
        for (const back of taken) await this.deps.limiter.consume(back.policy, [account.id, ...back.key], { cost: -1 });
        return false;
      }
      if (!counted.storeFailed) taken.push({ policy, key });
    }
    return true;
  }

  private issue(account: Account, purpose: EmailTokenPurpose, lifetimeMs: number): Promise<string> {
    return this.deps.tokens.issue(account.id, purpose, account.credentialGeneration, this.deps.clock(), lifetimeMs);
  }

  /** The link whose page makes the first passkey of an account started with one, and confirms its address. */
  private passkeyStartMail(account: Account, send: Send): Promise<void> {
    return send("recoveryMail", account, "passkey_start", async () => {
      const token = await this.issue(account, "new_passkey", this.deps.settings.verifyLifetimeMs);
      return this.messagesFor(account).passkeyStart(
        account.email,
        this.url(PAGES.new_passkey, token),
        Math.round(this.deps.settings.verifyLifetimeMs / 3_600_000),
      );
    });
  }

  /** Read apart from the account, as the hash is: the seed never enters a mail's promise. */
  private async deviceCodeSeed(userId: string): Promise<string | null> {
    const row = await this.deps.prisma.user.findUnique({ where: { id: userId }, select: { deviceCodeSeed: true } });
    return row?.deviceCodeSeed ?? null;
  }

  /** Read apart from the account: the hash never enters a mail's promise, which the spool keeps. */
  private hasPassword(userId: string): Promise<boolean> {
    return hasPassword(this.deps.prisma, userId);
  }

  private find(email: string): Promise<Account | null> {
    return this.deps.prisma.user.findUnique({ where: { email }, select: ACCOUNT });
  }

  private byId(id: string): Promise<Account | null> {
    return this.deps.prisma.user.findUnique({ where: { id }, select: ACCOUNT });
  }
}
