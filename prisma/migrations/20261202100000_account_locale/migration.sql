-- The account's languages and time zone, for its mails: the language it was created in, the one it
-- last signed in with, and the IANA zone its browser reported (validated with Intl). NULL for every
-- existing account: its mails use DEFAULT_LOCALE and UTC until it registers or signs in again.
ALTER TABLE "User" ADD COLUMN "locale" TEXT;
ALTER TABLE "User" ADD COLUMN "lastLocale" TEXT;
ALTER TABLE "User" ADD COLUMN "timeZone" TEXT;
