-- A counter that a password change raises in the same UPDATE that stores the new hash. Sessions
-- and refresh families record the counter their password check read; one that is behind the
-- user's is dead, whenever it was written (a sign-in in flight during the change included).
ALTER TABLE "User" ADD COLUMN "credentialGeneration" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "BrowserSession" ADD COLUMN "credentialGeneration" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "RefreshToken" ADD COLUMN "credentialGeneration" INTEGER NOT NULL DEFAULT 0;
