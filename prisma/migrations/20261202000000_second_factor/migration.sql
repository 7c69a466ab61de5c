-- A second step: an authenticator app, recovery codes, a passkey after the password, and the
-- pending sign-in that waits for one of them.
ALTER TABLE "User" ADD COLUMN "passkeySecondFactor" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "TotpFactor" (
    "userId" UUID NOT NULL,
    "secretSealed" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "setupSessionId" TEXT,
    "enabledAt" TIMESTAMP(3),
    "lastUsedStep" INTEGER,

    CONSTRAINT "TotpFactor_pkey" PRIMARY KEY ("userId")
);

CREATE TABLE "RecoveryCode" (
    "id" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "digest" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "RecoveryCode_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "PendingSignIn" (
    "id" UUID NOT NULL,
    "digest" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "purpose" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "deviceId" TEXT,
    "credentialGeneration" INTEGER NOT NULL,
    "route" TEXT NOT NULL,
    "browser" TEXT,
    "address" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "PendingSignIn_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "RecoveryCode_userId_digest_key" ON "RecoveryCode"("userId", "digest");
CREATE UNIQUE INDEX "PendingSignIn_digest_key" ON "PendingSignIn"("digest");
CREATE INDEX "PendingSignIn_userId_idx" ON "PendingSignIn"("userId");
CREATE INDEX "PendingSignIn_expiresAt_idx" ON "PendingSignIn"("expiresAt");

ALTER TABLE "TotpFactor" ADD CONSTRAINT "TotpFactor_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "RecoveryCode" ADD CONSTRAINT "RecoveryCode_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PendingSignIn" ADD CONSTRAINT "PendingSignIn_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
