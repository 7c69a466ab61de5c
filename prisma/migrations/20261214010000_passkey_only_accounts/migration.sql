-- "Create an account with a passkey" (issue 57, item 6, decision 39): an account may have no
-- password. It is created unconfirmed with none, and its address is confirmed only when the
-- emailed link's page has made its first passkey.
ALTER TABLE "User" ALTER COLUMN "passwordHash" DROP NOT NULL;
