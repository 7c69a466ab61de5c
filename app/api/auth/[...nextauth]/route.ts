import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { gatehouse } from "@/lib/auth/gatehouse";
import { fieldErrors, signInSchema } from "@/lib/auth/credentials";
import { authOptions } from "@/lib/auth/options";
import { verifyAltcha } from "@/lib/captcha/altcha";
import { readForm } from "@/lib/http/form";
import { busy, captchaInvalid, locked, rateLimited } from "@/lib/http/refusals";
import { jsonError } from "@/lib/http/responses";
import { HashBudgetFull } from "@/lib/password/hash-budget";

type Context = { params: Promise<{ nextauth: string[] }> };

export const dynamic = "force-dynamic";

export function GET(request: NextRequest, context: Context) {
  return NextAuth(request, context, authOptions());
}

/** next-auth reads the body itself; hand it the bytes that were already read and checked. */
function handOn(request: NextRequest, text: string, context: Context) {
  return NextAuth(new NextRequest(request.url, { method: "POST", headers: request.headers, body: text }), context, authOptions());
}

/**
 * Sign-in runs the protection pipeline before next-auth sees the request, cheapest layer
 * first: each refusal is answered before any costlier work is done.
 */
export async function POST(request: NextRequest, context: Context) {
  const gate = await gatehouse();
  const action = (await context.params).nextauth.join("/");
  if (action !== "callback/credentials") {
    // Sign-out, CSRF and the rest: bounded and checked, then next-auth as usual.
    const form = await readForm(request, gate.config.MAX_BODY_BYTES);
    return form.ok ? handOn(request, form.text, context) : form.response;
  }

  // 1. Rate limit per client address, before the body is even read.
  const client = gate.clientAddress(request.headers);
  const byAddress = await gate.limiter.consume("signInAddress", [client.key]);
  if (!byAddress.allowed) return rateLimited(byAddress);

  const form = await readForm(request, gate.config.MAX_BODY_BYTES);
  if (!form.ok) return form.response;
  const input = signInSchema.safeParse(form.fields);
  if (!input.success) return jsonError(400, "invalid_input", "Enter your email and password.", { fields: fieldErrors(input.error) });

  // 1b. Rate limit per normalised username and address.
  const byUsername = await gate.limiter.consume("signInUsername", [client.key, input.data.email]);
  if (!byUsername.allowed) return rateLimited(byUsername);

  // 2. ALTCHA proof of work, spent once.
  const captcha = await verifyAltcha(input.data.altcha, gate.altcha, gate.replays, gate.clock());
  if (!captcha.ok) return captchaInvalid(captcha);

  // 3. Account lockout: refused before Argon2id, even with the right password.
  const lockout = await gate.lockouts.check(gate.usernameKey(input.data.email), gate.clock());
  if (lockout.locked) return locked(lockout);

  // 4. Hash budget, then Argon2id inside next-auth's authorize().
  try {
    return await gate.hashBudget.run(() => handOn(request, form.text, context));
  } catch (error) {
    if (error instanceof HashBudgetFull) return busy();
    throw error;
  }
}
