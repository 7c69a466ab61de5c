-- One device code per account, window and seed (decision 40, amended): the seed is replaced when a
-- pending sign-in is finished with its code or its code takes too many wrong guesses, so a leaked
-- code serves no later sign-in. A volatile default: every existing account gets its own value.
ALTER TABLE "User" ADD COLUMN "deviceCodeSeed" TEXT NOT NULL DEFAULT gen_random_uuid()::text;
