import pino from "pino";
import { getConfig } from "@/lib/config/env";

let logger: pino.Logger | undefined;

/** One structured event per decision that matters; never a password, hash or secret. */
export function log(): pino.Logger {
  logger ??= pino({
    level: getConfig().LOG_LEVEL,
    base: { app: "gatehouse" },
    redact: { paths: ["password", "*.password", "passwordHash", "*.passwordHash", "secret"], remove: true },
  });
  return logger;
}
