-- CreateTable
CREATE TABLE "SignInLockout" (
    "usernameKey" TEXT NOT NULL,
    "failureCount" INTEGER NOT NULL,
    "lastFailureAt" TIMESTAMP(3) NOT NULL,
    "lockedUntil" TIMESTAMP(3),

    CONSTRAINT "SignInLockout_pkey" PRIMARY KEY ("usernameKey")
);

