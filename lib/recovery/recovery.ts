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

const PAGES: Record<EmailTokenPurpose, string> = { verify_email: "/verify-email", reset_password: "/reset-password", unlock: "/unlock" };

/**
 * Everything that emails an account's owner. Each entry point returns at once and does its work
 * in the background (look up the account, issue a link, queue the message), so what a request
 * answers, and when, is the same whether the address has an account or not. Unknown addresses
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

  /** A new account: a link that verifies its address. */
  accountCreated(account: Account): void {
    this.deps.background.run("verify_email", () => this.sendVerification(account));
  }

  private sendVerification(account: Account): Promise<void> {
    return this.send("recoveryMail", account, "verify_email", async () => {
      const token = await this.issue(account, "verify_email", this.deps.settings.verifyLifetimeMs);
      return this.messagesFor(account).verifyEmail(
        account.email,
        this.url(PAGES.verify_email, token),
        Math.round(this.deps.settings.verifyLifetimeMs / 3_600_000),
      );
    });
  }

  /** Registration with an address that has an account: its owner is told, and nobody else learns anything. */
  addressTaken(email: string): void {
    this.deps.background.run("address_taken", async () => {
      const account = await this.find(email);
      if (!account) return;
      await this.send("recoveryMail", account, "address_taken", async () =>
        this.messagesFor(account).addressTaken(account.email, this.url("/sign-in"), this.url("/forgot-password")),
      );
    });
  }

  /** The right password for an account whose address is not verified yet: a fresh verification link. */
  verificationNeeded(account: Account): void {
    this.accountCreated(account);
  }

  /** "Send it again": a new verification link for an account with this address that is not verified yet, nothing for any other. */
  verificationRequested(email: string): void {
    this.deps.background.run("verify_email", async () => {
      const account = await this.find(email);
      if (!account || account.emailVerifiedAt) return;
      await this.sendVerification(account);
    });
  }

  /** "Forgot password?": a reset link for an account with this address, nothing for any other. */
  resetRequested(email: string): void {
    this.deps.background.run("password_reset", async () => {
      const account = await this.find(email);
      if (!account) return;
      await this.send("recoveryMail", account, "password_reset", async () => {
        const token = await this.issue(account, "reset_password", this.deps.settings.resetLifetimeMs);
        return this.messagesFor(account).passwordReset(
          account.email,
          this.url(PAGES.reset_password, token),
          Math.round(this.deps.settings.resetLifetimeMs / 60_000),
        );
      });
    });
  }

  /** A username just locked for untrusted clients: its owner gets a link that lets one browser past the lock. */
  lockedOut(email: string, origin: NoticeOrigin): void {
    this.deps.background.run("locked_out", async () => {
      const account = await this.find(email);
      if (account) await this.sendUnlock(account, origin);
    });
  }

  /**
   * "Email me a new link": the same unlock email, for an account whose sign-in is paused now,
   * under the recovery mails' per-account quota (as many a period as the route lets one address
   * ask for one), not the lock notice's one-per-episode: a request the route answers is a link
   * sent, so the page can say so, and its refusal says when the next can be asked for.
   */
  unlockRequested(email: string, origin: NoticeOrigin): void {
    this.deps.background.run("unlock_requested", async () => {
      const account = await this.find(email);
      if (account && (await this.deps.isPaused(account.email))) await this.sendUnlock(account, origin, "recoveryMail");
    });
  }

  private sendUnlock(account: Account, origin: NoticeOrigin, quota: "securityNotice" | "recoveryMail" = "securityNotice"): Promise<void> {
    return this.send(quota, account, quota === "securityNotice" ? "locked_out" : "unlock_requested", async () => {
      const token = await this.issue(account, "unlock", this.deps.settings.unlockLifetimeMs);
      return this.messagesFor(account).lockedOut(
        account.email,
        this.url(PAGES.unlock, token),
        Math.round(this.deps.settings.unlockLifetimeMs / 60_000),
        origin,
      );
    });
  }

  /**
   * A right password from a new device of an account under attack: the code that lets that one
   * browser or app finish, within its own per-account quota (past it nothing is sent, and the
   * sign-in that asked waits for a code that does not come: the owner's known devices still go in).
   * `replacing` ("Resend code") puts the code in place of the last one first, only once the quota
   * allows a mail, so a code that is never sent never kills the one in the owner's mailbox; false:
   * the pending sign-in ended meanwhile, and nothing is sent.
   */
  deviceCode(user: { id: string }, code: string, lifetimeMinutes: number, origin: NoticeOrigin, replacing?: () => Promise<boolean>): void {
    this.deps.background.run("device_code", async () => {
      const account = await this.byId(user.id);
      if (!account) return;
      await this.send("deviceCodeMail", account, "device_code", async () => {
        if (replacing && !(await replacing())) return null;
        return this.messagesFor(account).deviceCode(account.email, code, lifetimeMinutes, origin, this.url("/forgot-password"));
      });
    });
  }

  /**
   * "New sign-in to your account", with "This wasn't me": a single-use link that ends that sign-in's
   * session (or the app's token family) and forgets its device, living as long as the session can.
   * The link is issued only once the quota lets the mail go, so no link exists that was never sent.
   */
  newDeviceSignIn(user: { id: string }, origin: NoticeOrigin, notMe: NotMe): void {
    this.deps.background.run("new_device_sign_in", async () => {
      const account = await this.byId(user.id);
      if (!account) return;
      await this.deps.onNotice?.("new_device_sign_in", account.id, origin);
      await this.send("securityNotice", account, "new_device_sign_in", async () => {
        const token = await issueNotMeLink(this.deps.prisma, account, notMe, this.deps.clock());
        return this.messagesFor(account).newDeviceSignIn(account.email, origin, this.url("/forgot-password"), this.url("/not-me", token));
      });
    });
  }

  /** Something the owner should know happened (coalesced per account and kind). */
  notice(kind: NoticeKind, user: { id: string } | { email: string }, origin: NoticeOrigin, detail?: string): void {
    this.deps.background.run(kind, async () => {
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
      await this.send("securityNotice", account, kind, async () => render(account.email, origin, forgotUrl, detail));
    });
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
   * language and time zone), and queued by calling the answer once the deletion has committed.
   * Null when there is no account.
   */
  async farewell(userId: string): Promise<((origin: NoticeOrigin) => void) | null> {
    const account = await this.byId(userId);
    if (!account) return null;
    return (origin) =>
      this.deps.background.run("account_deleted", () =>
        this.send("securityNotice", account, "account_deleted", async () =>
          this.messagesFor(account).accountDeleted(account.email, origin, this.url("/register")),
        ),
      );
  }

  /**
   * Renders and queues one message if the account's quota for its kind allows (null from `render`:
   * nothing to send after all). A full mail queue is checked first: rendering issues a link that
   * replaces the previous one, and a link that is never sent must not kill the one already in the
   * owner's mailbox (nor spend the quota).
   */
  private async send(
    policy: "recoveryMail" | "securityNotice" | "deviceCodeMail",
    account: Account,
    kind: string,
    render: () => Promise<MailMessage | null>,
  ) {
    if (this.deps.mailer.full()) {
      this.deps.onSkipped(kind, "mail_queue_full");
      return;
    }
    const quota = await this.deps.limiter.consume(policy, [account.id, kind]);
    if (!quota.allowed) {
      this.deps.onSkipped(kind, "quota");
      return;
    }
    const message = await render();
    if (message) this.deps.mailer.send(message);
  }

  private issue(account: Account, purpose: EmailTokenPurpose, lifetimeMs: number): Promise<string> {
    return this.deps.tokens.issue(account.id, purpose, account.credentialGeneration, this.deps.clock(), lifetimeMs);
  }

  private find(email: string): Promise<Account | null> {
    return this.deps.prisma.user.findUnique({ where: { email }, select: ACCOUNT });
  }

  private byId(id: string): Promise<Account | null> {
    return this.deps.prisma.user.findUnique({ where: { id }, select: ACCOUNT });
  }
}
