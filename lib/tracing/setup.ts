import { resourceFromAttributes } from "@opentelemetry/resources";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { setTracingEnabled } from "./spans";

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
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 })],
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
