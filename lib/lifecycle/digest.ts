import type { Gatehouse } from "@/lib/app";
import { mailBrandOf } from "@/lib/brand/brand";
import { appOrigin } from "@/lib/http/same-origin";
import { startPeriodic } from "@/lib/jobs/jobs";
import { messageOf } from "@/lib/log/message";
import type { MailMessage } from "@/lib/mail/types";
import { brandedMessages } from "@/lib/recovery/mails";
import { digestChecks, digestStore, type DigestFigures } from "@/lib/digest/figures";
import { WEEK_MS, weekStartMs } from "@/lib/digest/tally";

/** The digest of the week starting `weekStartMs`, in the client's brand and DEFAULT_LOCALE. */
export async function digestMail(
  gate: Gatehouse,
  to: string,
  weekStartMs: number,
): Promise<{ figures: DigestFigures; message: MailMessage }> {
  const figures = await digestStore(gate.sql).figures(weekStartMs);
  const locale = gate.i18n.defaultLocale;
  const messages = brandedMessages({
    brand: mailBrandOf(gate.brand, appOrigin(gate.config.http.publicUrl)),
    t: gate.i18n.translator(locale),
    locale,
    timeZone: null,
  });
  return { figures, message: messages.weeklyDigest(to, figures, digestChecks(figures)) };
}

/** The last whole week before `nowMs`: the one a digest sent now reports. */
export const lastWholeWeek = (nowMs: number) => weekStartMs(nowMs) - WEEK_MS;

/**
 * One run of the digest job: the tally's counts go to the database, then, with DIGEST_EMAIL set,
 * the last whole week's digest is claimed and spooled unless it was already (by this instance
 * before a restart, or by another), and the mailer takes it from the spool. Only that week: an
 * instance that was down for weeks does not mail the ones it missed.
 */
export async function runDigest(gate: Gatehouse): Promise<"sent" | "already" | "off"> {
  const store = digestStore(gate.sql);
  const drained = gate.digestTally?.drain() ?? [];
  try {
    await store.add(drained);
  } catch (error) {
    gate.digestTally?.restore(drained);
    throw error;
  }
  const to = gate.config.digest?.to;
  if (!to) return "off";
  const nowMs = gate.clock();
  const week = lastWholeWeek(nowMs);
  if (await store.sent(week)) return "already";
  const { figures, message } = await digestMail(gate, to, week);
  if (!(await store.claimAndSpool(week, nowMs, message))) return "already";
  await gate.mailer.resume();
  gate.log.info({
    event: "digest_spooled",
    week: new Date(week).toISOString().slice(0, 10),
    attempts: figures.attempts,
    takenOver: figures.takenOver,
  });
  return "sent";
}

/** Every DIGEST_INTERVAL_MS (the first a few seconds after start), on every instance: the claim keeps it to one mail a week. */
export const DIGEST_INTERVAL_MS = 60_000;

export function startDigest(gate: Gatehouse): { stop(): Promise<void> } {
  const periodic = startPeriodic(
    async () => {
      await runDigest(gate);
    },
    {
      intervalMs: DIGEST_INTERVAL_MS,
      firstAfterMs: 5_000,
      onError: (error) => gate.log.warn({ event: "digest_failed", err: messageOf(error) }),
    },
  );
  return {
    // The last counts are written at shutdown, so a restart loses none of them.
    async stop() {
      await periodic.stop();
      await runDigestFlush(gate).catch((error: unknown) => gate.log.warn({ event: "digest_failed", err: messageOf(error) }));
    },
  };
}

async function runDigestFlush(gate: Gatehouse): Promise<void> {
  const drained = gate.digestTally?.drain() ?? [];
  await digestStore(gate.sql).add(drained);
}
