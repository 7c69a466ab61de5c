import { parse as parseContentType } from "content-type";
import { accept, refuse, type OrRefused } from "./or-refused";
import { jsonError } from "./responses";

/**
 * One parse per body. A body is read once, bounded, by the one parser its exact media type
 * names; every later layer (next-auth included) gets the fields that parser produced, never
 * the bytes. "Contains application/json" is not a media type: `application/json;
 * x=application/x-www-form-urlencoded` once meant JSON to one layer and a form to another.
 */

type MediaType = "application/x-www-form-urlencoded" | "application/json";

const MEDIA_HINT: Record<MediaType, string> = {
  "application/x-www-form-urlencoded": "Send the form as application/x-www-form-urlencoded.",
  "application/json": "Send the body as application/json.",
};

/**
 * A body the edge refuses, with the status and code to answer with. Thrown only inside this
 * module, from deep in a parser, and turned into a refusal by `readAs` before any caller sees it.
 */
class BodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    readonly code: "invalid_input" | "invalid_json" | "payload_too_large" | "unsupported_media_type",
    message: string,
  ) {
    super(message);
  }
}

/** The 4xx JSON answer for a refused body. */
function bodyRefusal(error: BodyError): Response {
  // The rest of an oversized body is never read, so this connection cannot carry another
  // request: say so, or a keep-alive client sends its next one into a reset.
  const close = error.status === 413 ? { Connection: "close" } : undefined;
  return jsonError(error.status, error.code, error.message, {}, close);
}

/**
 * True when the Content-Type header is exactly `expected` (case-insensitive), with no parameter
 * but an optional UTF-8 charset. Anything malformed, repeated or trailing is not a match.
 */
export function isMediaType(header: string | null, expected: MediaType): boolean {
  if (header === null) return false;
  const parsed = parseContentType(header);
  // Equal to `expected`, a valid media type, is also what makes the parsed type valid.
  if (parsed.index !== header.length || parsed.type !== expected) return false;
  const names = Object.keys(parsed.parameters);
  if (names.some((name) => name !== "charset")) return false;
  const charset = parsed.parameters.charset;
  return charset === undefined || charset.toLowerCase() === "utf-8";
}

/** The 415 `readJson` answers for a body of another type: also what a headerless JSON-only request gets (lib/http/csrf.ts). */
export function jsonRequired(): Response {
  return bodyRefusal(new BodyError(415, "unsupported_media_type", MEDIA_HINT["application/json"]));
}

/**
 * Reads at most `maxBytes` of the body and stops there, so a 1 GB upload costs no more than
 * the limit (Content-Length is checked first, but a client can omit or lie about it).
 */
async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new BodyError(413, "payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
  let text: string | null;
  try {
    text = await readCappedText(request.body, maxBytes);
  } catch {
    // The client's socket closed mid-body (it left, or took longer than requestTimeout): Node
    // ends the stream with "aborted" ECONNRESET, which must not read as the database's outage.
    throw new BodyError(400, "invalid_input", "The request body did not arrive in full.");
  }
  if (text === null) throw new BodyError(413, "payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
  return text;
}

/** A stream's UTF-8 text, read up to `maxBytes` and cancelled past it (null): for requests and for answers of other services alike. */
export async function readCappedText(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string | null> {
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
}

async function readAs<T>(
  request: Request,
  maxBytes: number,
  type: MediaType | null,
  parse: (text: string) => T,
): Promise<OrRefused<{ value: T }>> {
  try {
    if (type !== null && !isMediaType(request.headers.get("content-type"), type))
      throw new BodyError(415, "unsupported_media_type", MEDIA_HINT[type]);
    return accept({ value: parse(await readBodyText(request, maxBytes)) });
  } catch (error) {
    if (error instanceof BodyError) return refuse(bodyRefusal(error));
    throw error;
  }
}

/**
 * A bounded body as text, whatever its media type (browsers label CSP reports two ways), or the
 * 413 answer for one that is too large.
 */
export function readText(request: Request, maxBytes: number): Promise<OrRefused<{ value: string }>> {
  return readAs(request, maxBytes, null, (text) => text);
}

/**
 * A bounded urlencoded form as `{ name: value }`. A field sent twice is refused: which of the two
 * counts is exactly the question two parsers answer differently.
 */
export function readForm(request: Request, maxBytes: number): Promise<OrRefused<{ value: Record<string, string> }>> {
  return readAs(request, maxBytes, "application/x-www-form-urlencoded", (text) => {
    // No prototype: a field named __proto__ stays a field.
    const fields: Record<string, string> = Object.create(null);
    for (const [name, value] of new URLSearchParams(text)) {
      if (Object.hasOwn(fields, name))
        throw new BodyError(400, "invalid_input", `The field ${JSON.stringify(name.slice(0, 64))} was sent more than once.`);
      fields[name] = value;
    }
    return fields;
  });
}

/** A bounded JSON body, or the 4xx answer for one that is too large, not JSON, or of another type. */
export function readJson(request: Request, maxBytes: number): Promise<OrRefused<{ value: unknown }>> {
  return readAs(request, maxBytes, "application/json", (text) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new BodyError(400, "invalid_json", "The request body is not valid JSON.");
    }
  });
}
