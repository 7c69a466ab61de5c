-- Wrong device codes count on the username's lock for strangers, which mails the owner the unlock
-- link: the pending sign-in keeps the address it was asked for, sealed (a stand-in's too, alike).
ALTER TABLE "PendingSignIn" ADD COLUMN "sealedEmail" TEXT;
