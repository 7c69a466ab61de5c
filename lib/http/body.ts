/** A body the edge refuses, with the status and code to answer with. */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    readonly code: "invalid_json" | "payload_too_large" | "unsupported_media_type",
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads at most `maxBytes` of the body and stops there, so a 1 GB upload costs no more than
 * the limit (Content-Length is checked first, but a client can omit or lie about it).
 */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new BodyError(413, "payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new BodyError(413, "payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
}

export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) throw new BodyError(415, "unsupported_media_type", "Send the body as application/json.");
  const text = await readBodyText(request, maxBytes);
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError(400, "invalid_json", "The request body is not valid JSON.");
  }
}
