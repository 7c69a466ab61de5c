import pino from "pino";

export type Logger = pino.Logger;

/**
 * One structured event per decision that matters; never a password, hash or secret. Each
 * Gatehouse builds its own from its configuration (createGatehouse): nothing here reads the
 * environment, so two instances in one process log at their own levels.
 */
export function createLogger(level: pino.LevelWithSilent): Logger {
  return pino({
    level,
    base: { app: "gatehouse" },
    redact: { paths: ["password", "*.password", "passwordHash", "*.passwordHash", "secret"], remove: true },
  });
}
