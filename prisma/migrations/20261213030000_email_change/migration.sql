-- Changing the account's address and "This wasn't me" (issue 57, items 1 and 7) ride on the emailed
-- links' table: a change link carries the address it sets and the one it replaces, and a link may
-- name the browser session it is about. Nullable: the older purposes carry none of them.
ALTER TABLE "EmailToken" ADD COLUMN "email" TEXT;
ALTER TABLE "EmailToken" ADD COLUMN "previousEmail" TEXT;
ALTER TABLE "EmailToken" ADD COLUMN "sessionId" TEXT;
ALTER TABLE "EmailToken" ADD COLUMN "deviceId" TEXT;
-- "Add a passkey", offered after a password sign-in to an account without one, dismissed for good.
ALTER TABLE "User" ADD COLUMN "passkeyInviteDismissedAt" TIMESTAMP(3);
