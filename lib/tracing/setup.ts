import { resourceFromAttributes } from "@opentelemetry/resources";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import type { Context } from "@opentelemetry/api";
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { setTracingEnabled, TRACER_NAME } from "./spans";

/**
 * Passes on Gatehouse's own spans only. Next.js traces itself once a provider is registered, and
 * its spans carry URLs, whose query strings may hold an emailed link's token: they stay here.
 */
class GatehouseSpansOnly implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}
  onStart(span: Span, context: Context): void {
    if (span.instrumentationScope.name === TRACER_NAME) this.next.onStart(span, context);
  }
  onEnd(span: ReadableSpan): void {
    if (span.instrumentationScope.name === TRACER_NAME) this.next.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

export type TracingSettings = { endpoint: string; serviceName: string };

/**
 * The OpenTelemetry SDK, exporting over OTLP/HTTP to `<endpoint>/v1/traces` in batches (the
 * export runs beside the requests; a collector that is down costs dropped spans, not answers).
 * Registered globally, with the AsyncLocalStorage context that lets a layer's span find its
 * request's. Returns the flush-and-stop for shutdown.
 */
export function startTracing(settings: TracingSettings): { shutdown(): Promise<void> } {
  const exporter = new OTLPTraceExporter({ url: `${settings.endpoint.replace(/\/+$/, "")}/v1/traces`, timeoutMillis: 5_000 });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.serviceName }),
    spanProcessors: [new GatehouseSpansOnly(new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 }))],
  });
  provider.register();
  setTracingEnabled(true);
  return {
    async shutdown() {
      setTracingEnabled(false);
      await provider.shutdown();
    },
  };
}
