import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { continueFrom, currentOrigin, currentRequestId, inSpan, SpanKind, startSpanFrom, startTracing, tracedCall, tracingOn } from "../src/tracing.js";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("tracing without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("starts nothing: the API stays the no-op one and no span is made", async () => {
    const tracing = await startTracing("test", undefined);
    expect(tracingOn()).toBe(false);
    expect(trace.getTracer("any").startSpan("probe").isRecording()).toBe(false);
    await tracing.shutdown();
  });

  it("still carries the request id: into the work, into what it hands on, and not the caller's trace context", async () => {
    const headers: Record<string, string> = { "x-request-id": "req-1", traceparent: TRACEPARENT };
    const seen = await continueFrom(
      (name) => headers[name],
      { name: "work", kind: SpanKind.SERVER },
      async () => {
        const inner = await inSpan({ name: "inner", kind: SpanKind.INTERNAL }, async () => currentRequestId());
        const sent = await tracedCall({ name: "call", kind: SpanKind.CLIENT }, async (origin) => origin);
        return { inner, sent, origin: currentOrigin(), span: trace.getActiveSpan() };
      },
    );
    expect(seen).toEqual({ inner: "req-1", sent: { "x-request-id": "req-1" }, origin: { "x-request-id": "req-1" }, span: undefined });
    expect(currentRequestId()).toBeUndefined();
  });

  it("runs later work under a stored origin's request id", async () => {
    const started = startSpanFrom({ "x-request-id": "req-2" }, { name: "job", kind: SpanKind.CONSUMER });
    expect(started.origin).toEqual({ "x-request-id": "req-2" });
    expect(await started.run(async () => currentRequestId())).toBe("req-2");
    started.end();
  });
});
