import type { APIResponse } from "@playwright/test";

// Transport framing, set by Node for whichever server wrote the response.
const FRAMING = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);

/** A response's status and headers without the framing, to compare two servers' (or two paths') answers. */
export function comparable(response: APIResponse): { status: number; headers: Record<string, string> } {
  const headers = Object.fromEntries(
    response
      .headersArray()
      .map(({ name, value }) => [name.toLowerCase(), value] as const)
      .filter(([name]) => !FRAMING.has(name)),
  );
  return { status: response.status(), headers };
}
