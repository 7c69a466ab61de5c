import { fieldErrors, registrationSchema } from "@/lib/auth/credentials";
import { getConfig } from "@/lib/config/env";
import { prisma } from "@/lib/db/client";
import { BodyError, readJsonBody } from "@/lib/http/body";
import { json, jsonError } from "@/lib/http/responses";
import { log } from "@/lib/log/logger";
import { argon2Params } from "@/lib/password/params";
import { registerAccount } from "@/lib/users/accounts";

export const dynamic = "force-dynamic";

export async function POST(request: Request) {
  const config = getConfig();
  let body: unknown;
  try {
    body = await readJsonBody(request, config.MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof BodyError) return jsonError(error.status, error.code, error.message);
    throw error;
  }

  // Validated before any hashing: a 10,000-character password costs nothing.
  const input = registrationSchema.safeParse(body);
  if (!input.success) {
    return jsonError(400, "invalid_input", "Check the highlighted fields.", { fields: fieldErrors(input.error) });
  }

  const result = await registerAccount(await prisma(), input.data, argon2Params(config.ARGON2_PROFILE));
  if (!result.ok) return jsonError(409, "email_taken", "An account with this email already exists.");

  log().info({ event: "account_registered", userId: result.user.id });
  return json(201, { id: result.user.id, email: result.user.email });
}
