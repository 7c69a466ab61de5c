import { trace } from "@opentelemetry/api";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inSpan, setTracingEnabled } from "./spans";

describe("inSpan", () => {
  afterEach(() => {
    setTracingEnabled(false);
    vi.restoreAllMocks();
  });

  it("only runs the work while tracing is off: no tracer, no span, not even the API's no-op one", async () => {
    const getTracer = vi.spyOn(trace, "getTracer");
    const outcome = vi.fn(() => "ok");
    await expect(inSpan("layer", async () => 42, outcome)).resolves.toBe(42);
    expect(getTracer).not.toHaveBeenCalled();
    expect(outcome).not.toHaveBeenCalled();
  });

  it("records the outcome, or an error's class (never its message), once on", async () => {
    setTracingEnabled(true);
    const span = { setAttribute: vi.fn(), setStatus: vi.fn(), end: vi.fn() };
    const tracer = { startActiveSpan: (_name: string, _options: unknown, run: (s: typeof span) => unknown) => run(span) };
    vi.spyOn(trace, "getTracer").mockReturnValue(tracer as never);
    await inSpan(
      "layer",
      async () => "x",
      () => "allowed",
    );
    expect(span.setAttribute).toHaveBeenCalledWith("gatehouse.outcome", "allowed");
    await expect(
      inSpan(
        "layer",
        async () => {
          throw new TypeError("user@example.com is bad");
        },
        () => "never",
      ),
    ).rejects.toThrow(TypeError);
    expect(span.setStatus).toHaveBeenCalledWith({ code: 2, message: "TypeError" });
    expect(span.end).toHaveBeenCalledTimes(2);
  });
});
