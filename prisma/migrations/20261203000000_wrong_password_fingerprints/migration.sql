-- Keyed, truncated fingerprints (HMAC-SHA-256 under a secret of their own, 64 bits) of the
-- subject's last few wrong passwords, each scoped to the client that sent it: a repeat of one is
-- not counted again. They live with the streak (a success or a reset clears them, the quiet
-- period ends them) and are never a hash anyone could test a password against without the secret.
ALTER TABLE "SignInLockout" ADD COLUMN "wrongPasswords" TEXT[] NOT NULL DEFAULT '{}';
