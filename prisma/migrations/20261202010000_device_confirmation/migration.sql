-- A device confirmation: a code mailed to the owner when a right password comes from a new device
-- of an account under attack. A wrong password gets a stand-in with no user, answered alike.
ALTER TABLE "PendingSignIn" ALTER COLUMN "userId" DROP NOT NULL;
ALTER TABLE "PendingSignIn" ADD COLUMN "codeDigest" TEXT;
-- The username key, for the lock on wrong codes (a stand-in has it too, so the lock tells nothing).
ALTER TABLE "PendingSignIn" ADD COLUMN "usernameKey" TEXT;
-- When a password check from an untrusted client last failed (or waited for a mailed code): what
-- "under attack" reads. A success clears the streak, not this.
ALTER TABLE "SignInLockout" ADD COLUMN "lastFailedAt" TIMESTAMP(3);
