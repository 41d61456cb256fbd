import { eventually, startReceiver, startSmtpSink, type Receiver, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, settledMessage, sinkCredentials } from "./delivery-helpers.js";
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

/** The span and its ancestors as [service, kind, name], nearest first. */
const chainOf = (span: ExportedSpan, spans: ExportedSpan[]) => ancestry(span, spans).map((each) => [each.service, each.kind, each.name]);

/** Parts of the chains a trigger's spans make, nearest first. */
function hops() {
  const { JOBS_SUBJECT_PREFIX: jobs, DELIVERIES_SUBJECT_PREFIX: deliveries } = stack.env;
  const triggerBatch = "notify.triggers.v1.TriggerService/TriggerBatch";
  return {
    /** From an email send to the run of the trigger job that handed it over. */
    sendToRun: [
      ["worker", KIND.client, "email send"],
      ["worker", KIND.consumer, `${deliveries}.pages.email process`],
      ["worker", KIND.producer, `${deliveries}.pages.email publish`],
    ],
    /** A run of a trigger job, and the triggers service's publish of it. */
    run: [
      ["worker", KIND.consumer, `${jobs}.trigger process`],
      ["triggers", KIND.producer, `${jobs}.trigger publish`],
    ],
    /** The trigger batch that recorded the job, back to the request. */
    batchToRequest: [
      ["triggers", KIND.server, triggerBatch],
      ["gateway", KIND.client, triggerBatch],
      ["gateway", KIND.internal, "trigger batch"],
      ["gateway", KIND.server, "POST /v1/events/trigger"],
    ],
  };
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
      credentials: sinkCredentials(sink),
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
    const { sendToRun, run, batchToRequest } = hops();
    expect(chainOf(send, trace)).toEqual([...sendToRun, ...run, ...batchToRequest]);
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

  it("goes on with the trigger's trace and request id after a delay step: the resumption continues the call that scheduled it", async () => {
    const workflow = await createWorkflow(stack, "Traced after a delay", [
      { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "seconds" } },
      { template: { type: "email", subject: "Later", content: [{ type: "text", content: "Hello again" }] } },
    ]);
    await stack.request("POST", "/v1/subscribers", { subscriberId: "grace", email: "grace@example.com" });

    const requestId = "traced-delayed-trigger-1";
    const reply = await stack.request(
      "POST",
      "/v1/events/trigger",
      { name: workflow, to: "grace", transactionId: "t-traced-delay" },
      { "x-request-id": requestId },
    );
    expect(reply.body.data.status).toBe("processed");
    await settledMessage(stack, "t-traced-delay", "email", delivered);

    const scheduled = "notify.triggers.v1.TriggerService/ScheduleJobs";
    const { root, send, trace } = await eventually(async () => {
      const spans = spansOf(otlp);
      for (const root of spans.filter((span) => span.service === "gateway" && span.name === "POST /v1/events/trigger")) {
        const trace = spans.filter((span) => span.traceId === root.traceId);
        const send = trace.find((span) => span.name === "email send");
        if (send && trace.some((span) => span.name === scheduled) && ancestry(send, trace).at(-1) === root) return { root, send, trace };
      }
      return undefined;
    }, 20_000);

    // The run after the delay is the child of the call that scheduled it, in the run before it.
    const { sendToRun, run, batchToRequest } = hops();
    expect(chainOf(send, trace)).toEqual([
      ...sendToRun,
      ...run,
      ["triggers", KIND.server, scheduled],
      ["worker", KIND.client, scheduled],
      ...run,
      ...batchToRequest,
    ]);

    // Both runs, before the delay and after it, log under the trigger's request and trace.
    const runs = stack.logs.worker.filter((line) => line.msg === "trigger jobs done" && line.requestId === requestId);
    expect(runs.map((line) => line.traceId)).toEqual([root.traceId, root.traceId]);
  }, 60_000);
});
