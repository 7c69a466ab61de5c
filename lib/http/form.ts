import { BodyError, readBodyText, readJsonBody } from "./body";
import { jsonError } from "./responses";

export type ParsedForm = { ok: true; text: string; fields: Record<string, unknown> } | { ok: false; response: Response };

/**
 * Reads a bounded form body (urlencoded, as next-auth's sign-in posts it, or a JSON object)
 * and keeps the raw text so the same bytes can be handed on to next-auth.
 */
export async function readForm(request: Request, maxBytes: number): Promise<ParsedForm> {
  let text: string;
  try {
    text = await readBodyText(request, maxBytes);
  } catch (error) {
    if (error instanceof BodyError) return { ok: false, response: jsonError(error.status, error.code, error.message) };
    throw error;
  }
  const type = request.headers.get("content-type") ?? "";
  if (type.includes("application/x-www-form-urlencoded")) {
    return { ok: true, text, fields: Object.fromEntries(new URLSearchParams(text)) };
  }
  if (type.includes("application/json")) {
    try {
      const fields: unknown = JSON.parse(text);
      if (fields && typeof fields === "object" && !Array.isArray(fields)) return { ok: true, text, fields: fields as Record<string, unknown> };
    } catch {
      // Falls through to the same 400 as a non-object.
    }
    return { ok: false, response: jsonError(400, "invalid_json", "The request body is not a valid JSON object.") };
  }
  return { ok: false, response: jsonError(415, "unsupported_media_type", "Send the form as application/x-www-form-urlencoded.") };
}

/** A bounded JSON body, or the 4xx answer for one that is too large, not JSON, or of another type. */
export async function readJson(request: Request, maxBytes: number): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  try {
    return { ok: true, value: await readJsonBody(request, maxBytes) };
  } catch (error) {
    if (error instanceof BodyError) return { ok: false, response: jsonError(error.status, error.code, error.message) };
    throw error;
  }
}
