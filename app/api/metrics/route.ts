import { createHash, timingSafeEqual } from "node:crypto";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Prometheus metrics (prom-client's text format), for a scraper that sends
 * `Authorization: Bearer <METRICS_TOKEN>`. Without METRICS_TOKEN the endpoint does not exist.
 * The token is compared as SHA-256 digests in constant time.
 */
export const GET = limited("/api/metrics", async (request, { gate }) => {
  const token = gate.config.metrics.token;
  if (!token) return jsonError(404, "not_found", "Not found.");
  const presented = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  if (!timingSafeEqual(digest(presented), digest(token))) {
    const response = jsonError(401, "unauthenticated", "Send the metrics token as a Bearer token.");
    response.headers.set("WWW-Authenticate", 'Bearer realm="metrics"');
    return response;
  }
  return new Response(await gate.metrics.registry.metrics(), {
    status: 200,
    headers: { "Content-Type": gate.metrics.registry.contentType, "Cache-Control": "no-store" },
  });
});
