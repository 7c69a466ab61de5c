-- When a sign-in found the account's current password in a breach corpus: the owner must choose
-- a new one before anything else. NULL for every existing account (none was checked yet).
ALTER TABLE "User" ADD COLUMN "passwordBreachedAt" TIMESTAMP(3);
