import { z } from "zod";

/**
 * Every setting Gatehouse reads, with its default, parsed once. A bad value stops the process
 * at start with a message that names the variable, instead of failing later on a request.
 */
const DEV_ONLY_SECRET = "gatehouse-development-secret-do-not-use-in-production";

const schema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    DATABASE_URL: z.string().default(""),
    NEXTAUTH_SECRET: z.string().optional(),
    // Seconds a signed-in session (JWT) lasts.
    SESSION_MAX_AGE_SECONDS: z.coerce.number().int().min(60).max(30 * 24 * 3600).default(8 * 3600),
    // "owasp" is the only profile allowed in production; "test" exists so unit tests stay fast.
    ARGON2_PROFILE: z.enum(["owasp", "test"]).default("owasp"),
    // Largest request body the auth endpoints read, in bytes.
    MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(1024 * 1024).default(16 * 1024),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV === "production") {
      if (!env.NEXTAUTH_SECRET || env.NEXTAUTH_SECRET.length < 32) {
        ctx.addIssue({ code: "custom", path: ["NEXTAUTH_SECRET"], message: "must be set to at least 32 characters in production" });
      }
      if (env.ARGON2_PROFILE !== "owasp") {
        ctx.addIssue({ code: "custom", path: ["ARGON2_PROFILE"], message: "only 'owasp' is allowed in production" });
      }
    }
  });

export type AppConfig = Omit<z.infer<typeof schema>, "NEXTAUTH_SECRET"> & { NEXTAUTH_SECRET: string };

export function parseConfig(env: Record<string, string | undefined>): AppConfig {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "environment"}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join("; ")}`);
  }
  return { ...result.data, NEXTAUTH_SECRET: result.data.NEXTAUTH_SECRET ?? DEV_ONLY_SECRET };
}

let cached: AppConfig | undefined;

export function getConfig(): AppConfig {
  cached ??= parseConfig(process.env);
  return cached;
}
