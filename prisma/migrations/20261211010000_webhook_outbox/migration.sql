-- Security webhooks: each event is queued in the statement that records it, so a restart or a
-- kill -9 between the event and its delivery loses nothing; the id is the stable webhook-id.
CREATE TABLE "WebhookOutbox" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedUntil" TIMESTAMP(3),

    CONSTRAINT "WebhookOutbox_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "WebhookOutbox_nextAttemptAt_idx" ON "WebhookOutbox"("nextAttemptAt");
