import { readText } from "@/lib/http/body";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

const MAX_REPORT_BYTES = 16 * 1024;

type Violation = { directive?: string; blocked?: string };

function violations(body: unknown): Violation[] {
  // report-uri sends {"csp-report": {...}}; the Reporting API sends [{type, body: {...}}].
  const entries = Array.isArray(body) ? body.map((entry) => entry?.body) : [(body as Record<string, unknown>)?.["csp-report"]];
  return entries
    .filter((entry): entry is Record<string, unknown> => typeof entry === "object" && entry !== null)
    .slice(0, 20)
    .map((entry) => ({
      directive: String(entry["effectiveDirective"] ?? entry["effective-directive"] ?? entry["violated-directive"] ?? "").slice(0, 100),
      blocked: String(entry["blockedURL"] ?? entry["blocked-uri"] ?? "").slice(0, 200),
    }));
}

/**
 * Content-Security-Policy violation reports. Browsers send these on their own, many per page, so
 * they have a bucket of their own (cspReport) and never spend a user's sign-in or API quota.
 */
export const POST = limited("/api/csp-report", async (request, { gate }) => {
  const text = await readText(request, MAX_REPORT_BYTES);
  if (!text.ok) return text.response;
  let body: unknown;
  try {
    body = JSON.parse(text.value);
  } catch {
    return jsonError(400, "invalid_json", "A CSP report is JSON.");
  }
  for (const violation of violations(body)) gate.log.info({ event: "csp_violation", ...violation });
  return new Response(null, { status: 204 });
});
