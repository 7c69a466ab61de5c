-- The admin trail: every operator command (npm run admin), live or offline, with the operator's
-- name. The account is its username key (an HMAC), never its address, so a deleted account's
-- entries name nobody.
CREATE TABLE "AdminAction" (
    "id" UUID NOT NULL,
    "operator" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "subjectKey" TEXT,
    "channel" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AdminAction_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "AdminAction_createdAt_idx" ON "AdminAction"("createdAt");
