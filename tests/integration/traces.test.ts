import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/app";
import { startTracing } from "@/lib/tracing/setup";
import { browserSignIn, createAccount } from "../helpers/browser";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader } from "../helpers/peer";

type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
};

/**
 * Traces through the real sign-in route, exported by the OpenTelemetry SDK over OTLP/HTTP to a
 * receiver in this test: one trace per request, a span per layer, each with its outcome and
 * nothing about the person.
 */
describe("traces over OTLP/HTTP", () => {
  let database: TestDatabase;
  let gate: Gatehouse;
  let server: Server;
  const bodies: string[] = [];
  let tracing: { shutdown(): Promise<void> };

  beforeAll(async () => {
    announcePeerHeader();
    server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        if (req.url === "/v1/traces") bodies.push(body);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    tracing = startTracing({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, serviceName: "gatehouse-test" });
    database = await freshPglite();
    gate = await servedGatehouse(database.url, { NEW_DEVICE_CONFIRMATION: "off" });
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
    server?.close();
  });

  it("sends a sign-in as one trace with a span per layer and its outcome, and no personal data", async () => {
    const userId = await createAccount(gate, "traced@example.com", "the right passphrase");
    expect((await browserSignIn("traced@example.com", "the right passphrase", { address: "203.0.113.77" })).status).toBe(200);
    expect((await browserSignIn("traced@example.com", "a wrong passphrase", { address: "203.0.113.78" })).status).toBe(401);
    // Flushes the batch to the receiver, and turns tracing off.
    await tracing.shutdown();

    const payloads = bodies.map(
      (body) =>
        JSON.parse(body) as { resourceSpans: { resource: { attributes: OtlpSpan["attributes"] }; scopeSpans: { spans: OtlpSpan[] }[] }[] },
    );
    const spans = payloads.flatMap((payload) => payload.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    const service = payloads[0]!.resourceSpans[0]!.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue;
    expect(service).toBe("gatehouse-test");
    const outcome = (span: OtlpSpan) => span.attributes.find((a) => a.key === "gatehouse.outcome")?.value.stringValue;
    const roots = spans.filter((span) => span.name === "gatehouse /api/auth/callback/credentials");
    expect(roots.map(outcome)).toEqual(["200", "401"]);

    const layers = (root: OtlpSpan) => {
      const inTrace = spans.filter((span) => span.traceId === root.traceId && span !== root);
      return inTrace.map((span) => `${span.name}:${outcome(span)}`);
    };
    const signedIn = layers(roots[0]!);
    for (const layer of [
      "limit:allowed",
      "altcha:ok",
      "lockout:open",
      "hash budget wait:untrusted",
      "argon2id:valid",
      "session write:written",
    ]) {
      expect(signedIn).toContain(layer);
    }
    const failed = layers(roots[1]!);
    expect(failed).toContain("argon2id:invalid");
    expect(failed).toContain("lockout:counted");
    expect(failed.some((layer) => layer.startsWith("session write"))).toBe(false);
    // Every layer's span is the request's child or grandchild: one trace, not loose spans.
    expect(spans.filter((span) => span.traceId === roots[0]!.traceId).every((span) => span === roots[0] || span.parentSpanId)).toBe(true);

    // The request's span is its trace's root, not a child of a framework's span.
    expect(roots.every((root) => !root.parentSpanId)).toBe(true);

    const everything = bodies.join("\n");
    for (const secret of ["traced@example.com", "203.0.113.77", "203.0.113.78", userId, "the right passphrase", "a wrong passphrase"]) {
      expect(everything).not.toContain(secret);
    }
  });
});
