-- Rows an account owns are deleted with it. Rows left behind by an account deleted before this
-- migration (nothing tied them to it) are removed first, or the constraints could not be added.
DELETE FROM "BrowserSession" WHERE "userId" NOT IN (SELECT "id" FROM "User");
DELETE FROM "RefreshToken" WHERE "userId" NOT IN (SELECT "id" FROM "User");
DELETE FROM "SecurityEvent" WHERE "userId" NOT IN (SELECT "id" FROM "User");
DELETE FROM "Report" WHERE "userId" NOT IN (SELECT "id" FROM "User");
DELETE FROM "DownloadToken" WHERE "userId" NOT IN (SELECT "id" FROM "User");
DELETE FROM "EmailToken" WHERE "userId" NOT IN (SELECT "id" FROM "User");

ALTER TABLE "BrowserSession" ADD CONSTRAINT "BrowserSession_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "RefreshToken" ADD CONSTRAINT "RefreshToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SecurityEvent" ADD CONSTRAINT "SecurityEvent_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Report" ADD CONSTRAINT "Report_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "DownloadToken" ADD CONSTRAINT "DownloadToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "EmailToken" ADD CONSTRAINT "EmailToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
