-- Whether the client's systems were told this username is under attack (username.under_attack),
-- so the attack watch (lib/webhooks/attacks.ts) tells them once, and once that it is calm again.
ALTER TABLE "SignInLockout" ADD COLUMN "attackAnnounced" BOOLEAN NOT NULL DEFAULT false;
