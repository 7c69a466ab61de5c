import { SpanStatusCode, trace, type Span } from "@opentelemetry/api";

/**
 * Spans around the sign-in path's layers (docs/operations.md, "Traces"). Each carries its layer's
 * outcome (`gatehouse.outcome`: allowed, refused, valid, …) and nothing about the person: no
 * address, username, account id or key.
 *
 * Off unless tracing was set up (lib/tracing/setup.ts, when OTEL_EXPORTER_OTLP_ENDPOINT is set):
 * then `inSpan` only calls its work, without even the API's no-op span. The flag lives on
 * globalThis because Next.js bundles instrumentation.ts and the routes apart, each with its own
 * copy of this module (docs/decisions/0006-results-not-exceptions.md).
 */
const ENABLED = Symbol.for("gatehouse.tracing.enabled");

export function tracingEnabled(): boolean {
  return (globalThis as Record<symbol, unknown>)[ENABLED] === true;
}

export function setTracingEnabled(enabled: boolean): void {
  (globalThis as Record<symbol, unknown>)[ENABLED] = enabled;
}

/** The instrumentation scope of every Gatehouse span: the only one exported (lib/tracing/setup.ts). */
export const TRACER_NAME = "gatehouse";

/**
 * Runs `work` in a span named `name` (a child of the request's), recording `outcome(result)`, or an
 * error's class. `root`: the request's own span, a trace of its own rather than a child of Next.js's.
 */
export async function inSpan<T>(name: string, work: () => Promise<T>, outcome: (result: T) => string, root = false): Promise<T> {
  if (!tracingEnabled()) return work();
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { root }, async (span: Span) => {
    try {
      const result = await work();
      span.setAttribute("gatehouse.outcome", outcome(result));
      return result;
    } catch (error) {
      // The class only: a message may quote an input.
      span.setAttribute("gatehouse.outcome", "error");
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
      throw error;
    } finally {
      span.end();
    }
  });
}
