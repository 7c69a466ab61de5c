import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { fieldErrors, signInSchema } from "@/lib/auth/credentials";
import { gatehouse } from "@/lib/auth/gatehouse";
import { authOptions } from "@/lib/auth/options";
import { admitSignIn, withinHashBudget } from "@/lib/auth/sign-in-gate";
import { readForm } from "@/lib/http/form";
import { jsonError } from "@/lib/http/responses";

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
 * first: rate limits, ALTCHA and the lockout (admitSignIn), then the hash budget, then
 * Argon2id inside next-auth's authorize().
 */
export async function POST(request: NextRequest, context: Context) {
  const gate = await gatehouse();
  const action = (await context.params).nextauth.join("/");
  if (action !== "callback/credentials") {
    // Sign-out, CSRF and the rest: bounded and checked, then next-auth as usual.
    const form = await readForm(request, gate.config.MAX_BODY_BYTES);
    return form.ok ? handOn(request, form.text, context) : form.response;
  }

  let body = "";
  const admitted = await admitSignIn(gate, gate.clientAddress(request.headers), async () => {
    const form = await readForm(request, gate.config.MAX_BODY_BYTES);
    if (!form.ok) return form;
    body = form.text;
    const input = signInSchema.safeParse(form.fields);
    if (!input.success) return { ok: false, response: jsonError(400, "invalid_input", "Enter your email and password.", { fields: fieldErrors(input.error) }) };
    return { ok: true, value: input.data };
  });
  if (!admitted.ok) return admitted.response;

  return withinHashBudget(gate, () => handOn(request, body, context));
}
