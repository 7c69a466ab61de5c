-- CreateTable
CREATE TABLE "BrowserSession" (
    "id" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "lastSeenAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "browser" TEXT NOT NULL,
    "address" TEXT NOT NULL,

    CONSTRAINT "BrowserSession_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BrowserSession_userId_idx" ON "BrowserSession"("userId");

-- AlterTable: every token carries its family's start, absolute end and label.
ALTER TABLE "RefreshToken" ADD COLUMN "familyCreatedAt" TIMESTAMP(3),
ADD COLUMN "familyExpiresAt" TIMESTAMP(3),
ADD COLUMN "client" TEXT NOT NULL DEFAULT 'API client',
ADD COLUMN "address" TEXT NOT NULL DEFAULT 'unknown';

-- Existing families started with their oldest token and end 90 days later (the default
-- REFRESH_FAMILY_LIFETIME_DAYS); a token that expires sooner keeps its own expiry.
UPDATE "RefreshToken" AS t
SET "familyCreatedAt" = f."startedAt", "familyExpiresAt" = f."startedAt" + INTERVAL '90 days'
FROM (SELECT "familyId", MIN("createdAt") AS "startedAt" FROM "RefreshToken" GROUP BY "familyId") AS f
WHERE t."familyId" = f."familyId";

UPDATE "RefreshToken" SET "expiresAt" = "familyExpiresAt" WHERE "expiresAt" > "familyExpiresAt";

ALTER TABLE "RefreshToken" ALTER COLUMN "familyCreatedAt" SET NOT NULL,
ALTER COLUMN "familyExpiresAt" SET NOT NULL;
