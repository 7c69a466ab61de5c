-- AlterTable
ALTER TABLE "KnownDevice" ADD COLUMN "claimedUntil" TIMESTAMP(3);

-- DropIndex
DROP INDEX "KnownDevice_expiresAt_idx";
