import { mailBrandOf, type Brand } from "@/lib/brand/brand";
import type { AppConfig } from "@/lib/config/env";
import type { Database } from "@/lib/db/client";
import { appOrigin } from "@/lib/http/same-origin";
import type { I18n } from "@/lib/i18n/i18n";
import { Background } from "@/lib/jobs/jobs";
import type { Logger } from "@/lib/log/logger";
import type { Metrics } from "@/lib/log/metrics";
import { messageOf } from "@/lib/log/message";
import { createMailer, mailerOptions, outboxOnlyNotice } from "@/lib/mail/mailer";
import { prismaMailSpool } from "@/lib/mail/spool";
import type { Mailer } from "@/lib/mail/types";
import type { RateLimiter } from "@/lib/rate-limit/limiter";
import { deviceCodeSeedTag, windowDeviceCode } from "@/lib/factors/device-confirmation";
import { Recovery } from "@/lib/recovery/recovery";
import { noticeWebhook } from "@/lib/webhooks/notices";
import type { AccountsRoom } from "./accounts";

type Settings = Pick<AppConfig, "mail" | "email" | "http" | "webhooks" | "lockout" | "nodeEnv" | "devServer" | "devices"> & {
  rateLimit: Pick<AppConfig["rateLimit"], "policies">;
};

type Deps = {
  database: Database;
  clock: () => number;
  log: Logger;
  metrics: Metrics;
  brand: Brand;
  i18n: I18n;
  limiter: RateLimiter;
  accounts: Pick<AccountsRoom, "lockouts" | "pendingSignIns" | "emailTokens" | "usernameKey">;
};

/** The mail room of a Gatehouse: the work requests do not wait for, the mail queue, and every mail to an owner. */
export type MailRoom = {
  /** Work requests start and do not wait for (account lookups and emails): their answers stay alike. */
  background: Background;
  mailer: Mailer;
  /** Everything that emails an account's owner: verification, reset and unlock links, notices. */
  recovery: Recovery;
};

export function buildMail(settings: Settings, deps: Deps): MailRoom {
  const { log, clock, accounts } = deps;
  const background = new Background((task, error) => log.error({ event: "background_task_failed", task, err: messageOf(error) }));
  // Promises of mail a killed process left are kept by Recovery, made below (resume starts after it).
  let keepIntent: (heldId: string, intent: unknown) => void = () => {};
  const mailer = createMailer(mailerOptions(settings), {
    log,
    metrics: deps.metrics,
    spool: prismaMailSpool(deps.database.prisma, clock),
    onIntent: (heldId, intent) => keepIntent(heldId, intent),
  });
  // Links that sit in files on this machine reach no owner: an error in production, news on `npm run dev`.
  const outboxOnly = outboxOnlyNotice(settings);
  if (outboxOnly) log[outboxOnly.level](outboxOnly.entry);
  const recovery = new Recovery({
    prisma: deps.database.prisma,
    tokens: accounts.emailTokens,
    mailer,
    limiter: deps.limiter,
    background,
    clock,
    settings: {
      publicUrl: appOrigin(settings.http.publicUrl),
      brand: mailBrandOf(deps.brand, appOrigin(settings.http.publicUrl)),
      verifyLifetimeMs: settings.email.verifyLinkLifetimeMs,
      resetLifetimeMs: settings.email.resetLinkLifetimeMs,
      unlockLifetimeMs: settings.email.unlockLinkLifetimeMs,
    },
    i18n: deps.i18n,
    isPaused: pausedRule(settings, deps),
    onSkipped: (kind, reason) => log.info({ event: "mail_skipped", kind, reason }),
    onNotice: settings.webhooks ? noticeWebhook(deps.database.sql) : undefined,
    windowCode: (userId, seed, window) => windowDeviceCode(settings.devices.codeSecret, userId, seed, window),
    seedTag: (seed) => deviceCodeSeedTag(settings.devices.codeSecret, seed),
  });
  keepIntent = (heldId, intent) => recovery.resumeIntent(heldId, intent);
  // What the last process could not deliver, or a killed one promised: sent now (and swept on a timer), each message once.
  background.run("mail_resume", () => mailer.resume().then(() => {}));
  return { background, mailer, recovery };
}

/** Whether mail to an address waits: its account is locked, or failed as recently as the per-username limit counts. */
function pausedRule(settings: Settings, deps: Deps): (email: string) => Promise<boolean> {
  const usernameLimit = settings.rateLimit.policies.signInUsername.algorithm;
  const usernameLimitMs =
    usernameLimit.kind === "token-bucket" ? Math.max(...usernameLimit.bandwidths.map((b) => b.periodMs)) : usernameLimit.windowMs;
  return async (email) => {
    const nowMs = deps.clock();
    const check = await deps.accounts.lockouts.check(deps.accounts.usernameKey(email), nowMs, settings.lockout);
    const row = check.seen.row;
    // Failures as recent as the per-username limit still counts them: the owner's browser may be
    // refused by it after the lock itself ended. Older ones would let a stranger keep a link
    // coming with one wrong password every 12 hours.
    return check.locked || (row !== null && row.failureCount > 0 && nowMs - row.lastFailureAtMs < usernameLimitMs);
  };
}
