-- A download token names the one report it opens and is spent on first use. Tokens issued before
-- this named no report (and live ten minutes at most): they are dropped rather than left able to
-- open every report of their user.
DELETE FROM "DownloadToken";

ALTER TABLE "DownloadToken" ADD COLUMN "reportId" UUID NOT NULL;
ALTER TABLE "DownloadToken" ADD COLUMN "usedAt" TIMESTAMP(3);
ALTER TABLE "DownloadToken" ADD CONSTRAINT "DownloadToken_reportId_fkey" FOREIGN KEY ("reportId") REFERENCES "Report"("id") ON DELETE CASCADE ON UPDATE CASCADE;
