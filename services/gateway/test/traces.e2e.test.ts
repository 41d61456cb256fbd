import { eventually, startReceiver, startSmtpSink, type Receiver, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, settledMessage } from "./delivery-helpers.js";
import { startProcessStack, type ProcessStack } from "./process-stack.js";

/** A span as OTLP/HTTP JSON carries it, with the service that sent it. */
interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
}

interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: Omit<ExportedSpan, "service">[] }[];
  }[];
}

/** OTLP span kinds. */
const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

/** Every span the receiver was sent so far. */
function spansOf(receiver: Receiver): ExportedSpan[] {
  return receiver.received
    .filter((request) => request.url === "/v1/traces")
    .flatMap((request) =>
      (JSON.parse(request.body) as OtlpExport).resourceSpans.flatMap((resourceSpans) => {
        const service = resourceSpans.resource.attributes.find((attribute) => attribute.key === "service.name")?.value.stringValue ?? "?";
        return resourceSpans.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ ...span, service })));
      }),
    );
}

/** The span and its ancestors, nearest first (as far as the trace's spans reach). */
function ancestry(span: ExportedSpan, spans: ExportedSpan[]): ExportedSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain = [span];
  for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) chain.push(parent);
  return chain;
}

let otlp: Receiver;
let sink: SmtpSink;
let stack: ProcessStack;
beforeAll(async () => {
  otlp = await startReceiver(() => ({ body: {} }));
  sink = await startSmtpSink();
  // Every process exports to the receiver, its batches sent often so that the test waits little.
  stack = await startProcessStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "100" }, logLevel: "debug" });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
  await otlp?.close();
});

describe("tracing (OTEL_EXPORTER_OTLP_ENDPOINT set)", () => {
  it("exports one trace of a trigger across the gateway, the triggers service, the worker and the provider send, each span the child of its cause", async () => {
    await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      identifier: "smtp-sink",
      credentials: { host: "localhost", port: String(sink.port), secure: false, ignoreTls: true, from: "notify@example.com" },
    });
    const workflow = await createWorkflow(stack, "Traced", [{ template: { type: "email", subject: "Hi", content: [{ type: "text", content: "Hello" }] } }]);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "ada", email: "ada@example.com" });

    const requestId = "traced-trigger-1";
    const reply = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "ada", transactionId: "t-traced" }, { "x-request-id": requestId });
    expect(reply.body.data.status).toBe("processed");
    expect(reply.headers.get("x-request-id")).toBe(requestId);
    await settledMessage(stack, "t-traced", "email", delivered);
    expect(sink.received.filter((mail) => mail.envelope.to.includes("ada@example.com"))).toHaveLength(1);

    // The trigger request's span is the root of the trace; the send is its last descendant. Each
    // process exports its spans in its own batches, a parent after its children: the trace is read
    // once every process's spans came and each of them reaches the root.
    const services = ["gateway", "triggers", "worker", "subscribers", "messages", "integrations"];
    const { root, send, trace } = await eventually(async () => {
      const spans = spansOf(otlp);
      const root = spans.find((span) => span.service === "gateway" && span.name === "POST /v1/events/trigger");
      if (!root) return undefined;
      const trace = spans.filter((span) => span.traceId === root.traceId);
      const send = trace.find((span) => span.name === "email send");
      const whole = services.every((service) => trace.some((span) => span.service === service)) && trace.every((span) => ancestry(span, trace).at(-1) === root);
      return send && whole ? { root, send, trace } : undefined;
    }, 20_000);
    expect(root.kind).toBe(KIND.server);
    expect(root.parentSpanId ?? "").toBe("");
    expect(new Set(trace.map((span) => span.service))).toEqual(new Set(services));

    // From the send back to the request, through every hop it took, each parent in the trace.
    const chain = ancestry(send, trace).map((span) => [span.service, span.kind, span.name]);
    const { jobs, deliveries } = { jobs: stack.env.JOBS_SUBJECT_PREFIX, deliveries: stack.env.DELIVERIES_SUBJECT_PREFIX };
    expect(chain).toEqual([
      ["worker", KIND.client, "email send"],
      ["worker", KIND.consumer, `${deliveries}.pages.email process`],
      ["worker", KIND.producer, `${deliveries}.pages.email publish`],
      ["worker", KIND.consumer, `${jobs}.trigger process`],
      ["triggers", KIND.producer, `${jobs}.trigger publish`],
      ["triggers", KIND.server, "notify.triggers.v1.TriggerService/TriggerBatch"],
      ["gateway", KIND.client, "notify.triggers.v1.TriggerService/TriggerBatch"],
      ["gateway", KIND.internal, "trigger batch"],
      ["gateway", KIND.server, "POST /v1/events/trigger"],
    ]);
    // The worker's calls to other services are children of its job's spans too.
    const messagesCall = trace.find((span) => span.service === "messages" && span.kind === KIND.server);
    expect(ancestry(messagesCall!, trace).at(-1)).toEqual(root);

    // The request id (and trace id) is on the log lines of every process that worked for the request.
    for (const name of ["gateway", "worker"] as const) {
      const lines = stack.logs[name].filter((line) => line.requestId === requestId);
      expect(lines.length, name).toBeGreaterThan(0);
      for (const line of lines) expect(line.traceId, name).toBe(root.traceId);
    }
  }, 60_000);
});
