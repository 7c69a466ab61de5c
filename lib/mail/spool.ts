import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import type { HeldIntent, MailSpool, SpooledMail } from "./mailer";
import type { MailMessage } from "./types";

/**
 * How long a claimed row belongs to the process that claimed it, from its claim, its last
 * attempt or the mailer's last renewal (a quarter of the lease apart). A clean shutdown hands
 * its rows back at once (save() and handBack() clear the claim); a process killed holding some
 * leaves them to the first sweep after the lease, with the attempts they had: within
 * CLAIM_LEASE_MS + TAKE_OVER_EVERY_MS, under a minute.
 */
const CLAIM_LEASE_MS = 40_000;
const TAKE_OVER_EVERY_MS = 15_000;

/** The mail spool in the database: shared by every instance, so any next start sends it. */
export function prismaMailSpool(prisma: PrismaClient, clock: () => number): MailSpool {
  return {
    async save(mail: SpooledMail[]) {
      await prisma.$transaction(
        mail.map((item) =>
          prisma.mailSpool.upsert({
            where: { id: item.id },
            create: {
              id: item.id,
              kind: item.message.kind,
              message: item.message as unknown as Prisma.InputJsonValue,
              attempts: item.attempts,
            },
            update: { attempts: item.attempts, claimedUntil: null },
          }),
        ),
      );
    },
    async claim(limit: number) {
      const now = new Date(clock());
      // One statement: rows are claimed atomically, and SKIP LOCKED lets two starting instances share them.
      const rows = await prisma.$queryRaw<{ id: string; message: { intent?: unknown }; attempts: number }[]>`
        UPDATE "MailSpool" SET "claimedUntil" = ${new Date(clock() + CLAIM_LEASE_MS)}
         WHERE "id" IN (
           SELECT "id" FROM "MailSpool" WHERE "claimedUntil" IS NULL OR "claimedUntil" < ${now}
            ORDER BY "createdAt" LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING "id", "message", "attempts"`;
      return rows.map((row): SpooledMail | HeldIntent =>
        "intent" in row.message
          ? { id: row.id, intent: row.message.intent, attempts: row.attempts }
          : { id: row.id, message: row.message as MailMessage, attempts: row.attempts },
      );
    },
    async hold(id: string, kind: string, intent: unknown) {
      await prisma.mailSpool.create({
        data: {
          id,
          kind,
          message: { intent } as unknown as Prisma.InputJsonValue,
          claimedUntil: new Date(clock() + CLAIM_LEASE_MS),
        },
      });
    },
    async rendered(id: string, message: MailMessage) {
      await prisma.mailSpool.updateMany({ where: { id }, data: { message: message as unknown as Prisma.InputJsonValue } });
    },
    async handBack(ids: string[]) {
      if (ids.length > 0) await prisma.mailSpool.updateMany({ where: { id: { in: ids } }, data: { claimedUntil: null } });
    },
    async retrying(id: string, attempts: number) {
      // No row (settled meanwhile): nothing to keep.
      await prisma.mailSpool.updateMany({ where: { id }, data: { attempts, claimedUntil: new Date(clock() + CLAIM_LEASE_MS) } });
    },
    async renew(ids: string[]) {
      await prisma.mailSpool.updateMany({ where: { id: { in: ids } }, data: { claimedUntil: new Date(clock() + CLAIM_LEASE_MS) } });
    },
    renewEveryMs: CLAIM_LEASE_MS / 4,
    takeOverEveryMs: TAKE_OVER_EVERY_MS,
    async settled(id: string) {
      await prisma.mailSpool.deleteMany({ where: { id } });
    },
  };
}
