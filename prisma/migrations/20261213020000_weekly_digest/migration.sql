-- The weekly digest (lib/digest/). Counts of what the sign-in routes answered, per week (its Monday,
-- 00:00 UTC) and name ("outcome:rate_limited", "network:203.0.113.x"), added to by each instance's
-- flush; a network is stored shortened as the account page shows it.
CREATE TABLE "DigestCount" (
    "weekStart" TIMESTAMP(3) NOT NULL,
    "name" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "DigestCount_pkey" PRIMARY KEY ("weekStart", "name")
);

-- One row per week whose digest was sent: inserted in the statement that spools the mail, so a
-- week is mailed once whatever restarts or instances race.
CREATE TABLE "DigestSent" (
    "weekStart" TIMESTAMP(3) NOT NULL,
    "sentAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DigestSent_pkey" PRIMARY KEY ("weekStart")
);
