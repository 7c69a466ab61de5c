-- Email verification, password reset and unlock links. Accounts that exist before this
-- migration were created when nothing could verify an address: they count as verified from
-- their creation, so nobody is shut out by the upgrade.
ALTER TABLE "User" ADD COLUMN "emailVerifiedAt" TIMESTAMP(3);
UPDATE "User" SET "emailVerifiedAt" = "createdAt";

CREATE TABLE "EmailToken" (
    "id" UUID NOT NULL,
    "digest" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "purpose" TEXT NOT NULL,
    "credentialGeneration" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "EmailToken_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "EmailToken_digest_key" ON "EmailToken"("digest");
CREATE INDEX "EmailToken_userId_purpose_idx" ON "EmailToken"("userId", "purpose");
CREATE INDEX "EmailToken_expiresAt_idx" ON "EmailToken"("expiresAt");
