import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import type { MailSpool, SpooledMail } from "./mailer";
import type { MailMessage } from "./types";

/**
 * How long a claimed message belongs to the process that claimed it, from its claim, its last
 * failed attempt or the mailer's last renewal (a quarter of the lease apart). A clean shutdown
 * hands its messages back at once (save() clears the claim); a process that died holding some
 * leaves them to the first start after the lease, with the attempts they had.
 */
const CLAIM_LEASE_MS = 60 * 60_000;

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
      const rows = await prisma.$queryRaw<{ id: string; message: unknown; attempts: number }[]>`
        UPDATE "MailSpool" SET "claimedUntil" = ${new Date(clock() + CLAIM_LEASE_MS)}
         WHERE "id" IN (
           SELECT "id" FROM "MailSpool" WHERE "claimedUntil" IS NULL OR "claimedUntil" < ${now}
            ORDER BY "createdAt" LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING "id", "message", "attempts"`;
      return rows.map((row) => ({ id: row.id, message: row.message as MailMessage, attempts: row.attempts }));
    },
    async retrying(id: string, attempts: number) {
      // No row (settled meanwhile): nothing to keep.
      await prisma.mailSpool.updateMany({ where: { id }, data: { attempts, claimedUntil: new Date(clock() + CLAIM_LEASE_MS) } });
    },
    async renew(ids: string[]) {
      await prisma.mailSpool.updateMany({ where: { id: { in: ids } }, data: { claimedUntil: new Date(clock() + CLAIM_LEASE_MS) } });
    },
    renewEveryMs: CLAIM_LEASE_MS / 4,
    async settled(id: string) {
      await prisma.mailSpool.deleteMany({ where: { id } });
    },
  };
}
