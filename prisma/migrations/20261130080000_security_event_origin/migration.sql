-- Where an event came from, for the account page: the client's browser family (from bowser's
-- tables, never the raw User-Agent) and the browser session it belongs to ("this device").
ALTER TABLE "SecurityEvent" ADD COLUMN "browser" TEXT;
ALTER TABLE "SecurityEvent" ADD COLUMN "sessionId" TEXT;
