-- The account page lists the known devices (issue 57, item 4): what each was, where from, and
-- since when. A device's row is replaced at every sign-in, so its first sighting is carried over;
-- rows from before this migration have none, and show their last sign-in only.
ALTER TABLE "KnownDevice" ADD COLUMN "firstSeenAt" TIMESTAMP(3);
ALTER TABLE "KnownDevice" ADD COLUMN "label" TEXT;
ALTER TABLE "KnownDevice" ADD COLUMN "address" TEXT;
