import { AsyncLocalStorage } from "node:async_hooks";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";

export { SpanKind };

/**
 * What a piece of work carries from the request that caused it, as headers: the gateway's request
 * id and, with tracing on, the W3C trace context (traceparent, tracestate). It travels in RPC
 * metadata, NATS headers and outbox rows, so every process the request caused logs its request id
 * and continues its trace.
 */
export type Origin = Record<string, string>;

export const REQUEST_ID_HEADER = "x-request-id";

/** Reads one header of incoming work (RPC metadata, NATS headers, a stored origin). */
export type ReadHeader = (name: string) => string | null | undefined;

/** The request id of the work under way: read by every log line (log.ts). */
const requestIds = new AsyncLocalStorage<string>();

export function currentRequestId(): string | undefined {
  return requestIds.getStore();
}

/** Set once tracing started; while undefined no span is made and the API stays the no-op one. */
let tracer: Tracer | undefined;

export function tracingOn(): boolean {
  return tracer !== undefined;
}

export interface Tracing {
  /** Sends the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting spans by OTLP/HTTP to `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT) as `serviceName`.
 * Without an endpoint nothing is loaded or started: the OpenTelemetry API stays the no-op one and
 * the code below makes no spans.
 */
export async function startTracing(serviceName: string, endpoint: string | undefined): Promise<Tracing> {
  if (!endpoint) return { shutdown: async () => undefined };
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
  ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, "")}/v1/traces` }))],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer("notify");
  return {
    async shutdown() {
      tracer = undefined;
      await provider.shutdown();
    },
  };
}

export interface SpanSpec {
  name: string;
  kind: SpanKind;
  attributes?: Attributes;
}

/**
 * A failure as a span status: its kind only, since messages may quote what a provider answered,
 * with credentials in it (the logs carry the redacted text).
 */
function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : typeof error });
}

/** Ends `span` when `work` settles, recording a failure. */
function endWith<T>(span: Span, work: Promise<T>): Promise<T> {
  return work.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failed(span, error);
      span.end();
      throw error;
    },
  );
}

/**
 * Runs `work` as the continuation of the work whose headers `read` reads: under its request id
 * (or `requestId` when given: the gateway makes one) and, with tracing on, in a span whose parent
 * is the one those headers name.
 */
export function continueFrom<T>(read: ReadHeader, spec: SpanSpec, work: () => Promise<T>, requestId = read(REQUEST_ID_HEADER) ?? undefined): Promise<T> {
  const traced = tracer ? () => startSpanIn(propagation.extract(ROOT_CONTEXT, read, headerGetter), spec, work) : work;
  return requestId ? requestIds.run(requestId, traced) : traced();
}

const headerGetter = {
  get: (read: ReadHeader, key: string) => read(key) ?? undefined,
  keys: () => [],
};

function startSpanIn<T>(parent: Context, spec: SpanSpec, work: () => Promise<T>): Promise<T> {
  const span = tracer!.startSpan(spec.name, { kind: spec.kind, ...(spec.attributes ? { attributes: spec.attributes } : {}) }, parent);
  return endWith(span, context.with(trace.setSpan(parent, span), work));
}

/** Runs `work` in a child span of the current one (tracing on), else just runs it. */
export function inSpan<T>(spec: SpanSpec, work: () => Promise<T>): Promise<T> {
  return tracer ? startSpanIn(context.active(), spec, work) : work();
}

/** The origin of the work under way, to hand on with work it causes: empty when there is none. */
export function currentOrigin(): Origin {
  const origin: Origin = {};
  const requestId = requestIds.getStore();
  if (requestId) origin[REQUEST_ID_HEADER] = requestId;
  if (tracer) propagation.inject(context.active(), origin);
  return origin;
}

/**
 * Makes a call to another process in a client (or producer) span of the current work; `send`
 * gets the origin to carry (the request id, and the trace context naming that span).
 */
export function tracedCall<T>(spec: SpanSpec, send: (origin: Origin) => Promise<T>): Promise<T> {
  if (!tracer) return send(currentOrigin());
  return startSpanIn(context.active(), spec, () => send(currentOrigin()));
}

/** The span of the work under way (tracing on), e.g. to name it once the route is known. */
export function currentSpan(): Span | undefined {
  return tracer ? trace.getSpan(context.active()) : undefined;
}

/** The trace id of the work under way, for log lines (tracing on). */
export function currentTraceId(): string | undefined {
  return currentSpan()?.spanContext().traceId;
}

export interface StartedSpan {
  /** The origin naming the span, to carry on. */
  origin: Origin;
  /** Runs `work` in the span (and under the origin's request id). */
  run<T>(work: () => Promise<T>): Promise<T>;
  end(error?: unknown): void;
}

/** The headers of an origin that `read` finds in incoming work. */
export function originFrom(read: ReadHeader): Origin {
  const origin: Origin = {};
  for (const name of ORIGIN_HEADERS) {
    const value = read(name);
    if (value) origin[name] = value;
  }
  return origin;
}

const ORIGIN_HEADERS = [REQUEST_ID_HEADER, "traceparent", "tracestate"];

/**
 * Starts a span for a piece of work that will end later (a job published now and acknowledged
 * later), as the continuation of `origin`; answers the origin naming the new span, and its end.
 */
export function startSpanFrom(origin: Origin, spec: SpanSpec): StartedSpan {
  const requestId = origin[REQUEST_ID_HEADER];
  if (!tracer) return { origin, end: () => undefined, run: (work) => (requestId ? requestIds.run(requestId, work) : work()) };
  const parent = propagation.extract(ROOT_CONTEXT, origin);
  const span = tracer.startSpan(spec.name, { kind: spec.kind, ...(spec.attributes ? { attributes: spec.attributes } : {}) }, parent);
  const carried: Origin = {};
  if (requestId) carried[REQUEST_ID_HEADER] = requestId;
  const within = trace.setSpan(parent, span);
  propagation.inject(within, carried);
  return {
    origin: carried,
    run: (work) => (requestId ? requestIds.run(requestId, () => context.with(within, work)) : context.with(within, work)),
    end(error) {
      if (error !== undefined) failed(span, error);
      span.end();
    },
  };
}
