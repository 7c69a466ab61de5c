-- The account's first successful sign-in (no new-device alert for it).
ALTER TABLE "User" ADD COLUMN "firstSignedInAt" TIMESTAMP(3);

-- Accounts that signed in before this column existed: their earliest recorded sign-in, so the
-- next sign-in from another device still alerts them.
UPDATE "User" u
SET "firstSignedInAt" = e.first
FROM (SELECT "userId", min("createdAt") AS first FROM "SecurityEvent" WHERE kind = 'sign_in_succeeded' GROUP BY "userId") e
WHERE e."userId" = u.id;
