-- A device confirmation: a code mailed to the owner when a right password comes from a new device
-- of an account under attack. A wrong password gets a stand-in with no user, answered alike.
ALTER TABLE "PendingSignIn" ALTER COLUMN "userId" DROP NOT NULL;
ALTER TABLE "PendingSignIn" ADD COLUMN "codeDigest" TEXT;
