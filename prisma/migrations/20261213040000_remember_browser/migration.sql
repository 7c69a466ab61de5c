-- "Remember this browser" (issue 57, item 5): the grant lives on the known device's row, so it
-- ends with the row (forget device, password change, revocation). Only a digest of the secret
-- the browser holds is stored; the grant carries over when a sign-in replaces the row.
ALTER TABLE "KnownDevice" ADD COLUMN "rememberDigest" TEXT;
ALTER TABLE "KnownDevice" ADD COLUMN "rememberUntil" TIMESTAMP(3);
