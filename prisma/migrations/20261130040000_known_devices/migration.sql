-- CreateTable
CREATE TABLE "KnownDevice" (
    "id" TEXT NOT NULL,
    "usernameKey" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" TIMESTAMP(3),

    CONSTRAINT "KnownDevice_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "KnownDevice_usernameKey_idx" ON "KnownDevice"("usernameKey");
