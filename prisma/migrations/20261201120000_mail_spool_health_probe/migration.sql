-- Mail left undelivered at shutdown, sent by the next start; and readiness's write probe.
CREATE TABLE "MailSpool" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "message" JSONB NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" TIMESTAMP(3),

    CONSTRAINT "MailSpool_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "HealthProbe" (
    "id" INTEGER NOT NULL,
    "checkedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "HealthProbe_pkey" PRIMARY KEY ("id")
);
