import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { authOptions } from "@/lib/auth/options";
import { getConfig } from "@/lib/config/env";
import { BodyError, readBodyText } from "@/lib/http/body";
import { jsonError } from "@/lib/http/responses";

type Context = { params: Promise<{ nextauth: string[] }> };

export const dynamic = "force-dynamic";

export function GET(request: NextRequest, context: Context) {
  return NextAuth(request, context, authOptions());
}

/**
 * next-auth parses POST bodies itself and answers a malformed or huge one with a 500. The body
 * is read here first, bounded, and checked, then handed on unchanged.
 */
export async function POST(request: NextRequest, context: Context) {
  let text: string;
  try {
    text = await readBodyText(request, getConfig().MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof BodyError) return jsonError(error.status, error.code, error.message);
    throw error;
  }
  const type = request.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    try {
      JSON.parse(text);
    } catch {
      return jsonError(400, "invalid_json", "The request body is not valid JSON.");
    }
  } else if (!type.includes("application/x-www-form-urlencoded")) {
    return jsonError(415, "unsupported_media_type", "Send the form as application/x-www-form-urlencoded.");
  }
  const forwarded = new NextRequest(request.url, { method: "POST", headers: request.headers, body: text });
  return NextAuth(forwarded, context, authOptions());
}
