-- The account's first successful sign-in (no new-device alert for it).
ALTER TABLE "User" ADD COLUMN "firstSignedInAt" TIMESTAMP(3);

-- Accounts from before this column: their earliest recorded sign-in, else (its event pruned by
-- retention, or a confirmation that did not sign in yet) the moment the address was confirmed.
-- Counting such an account as signed in before errs toward an alert on its next new device,
-- never toward silence. Unconfirmed accounts could not sign in, and stay NULL.
UPDATE "User" u
SET "firstSignedInAt" = COALESCE(
  (SELECT min(e."createdAt") FROM "SecurityEvent" e WHERE e."userId" = u.id AND e.kind = 'sign_in_succeeded'),
  u."emailVerifiedAt"
)
WHERE u."emailVerifiedAt" IS NOT NULL
   OR EXISTS (SELECT 1 FROM "SecurityEvent" e WHERE e."userId" = u.id AND e.kind = 'sign_in_succeeded');
