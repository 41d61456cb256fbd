import * as grpc from "@grpc/grpc-js";
import {
  create,
  fromBinary,
  isMessage,
  toBinary,
  type DescMessage,
  type DescMethod,
  type DescMethodUnary,
  type DescService,
  type MessageShape,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createContextKey,
  createContextValues,
  createServiceImplSpec,
  type Client,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type ServiceImpl,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { timingSafeEqual } from "node:crypto";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { Health, HealthCheckResponse_ServingStatus } from "@notify/proto";
import { fieldErrorsOf, invalidArgument } from "./errors.js";
import type { Logger } from "./log.js";
import { Histogram, LATENCY_BUCKETS, metricsPortOf, metricsRegistry, serveMetrics, type MetricsServer } from "./metrics.js";
import { isUnstorableText } from "./pg.js";
import { processStopping } from "./lifecycle.js";
import { isRedisUnavailable } from "./redis.js";
import { continueFrom, SpanKind, tracedCall, type Origin } from "./tracing.js";

/** The caller's tenancy, set by the gateway on every call. */
export interface Scope {
  organizationId: string;
  environmentId: string;
}

export const ORGANIZATION_HEADER = "notify-organization-id";
export const ENVIRONMENT_HEADER = "notify-environment-id";

const scopeKey = createContextKey<Scope | undefined>(undefined, { description: "caller scope" });

/** The scope of the current call; the interceptor guarantees it is present on scoped services. */
export function scopeOf(context: HandlerContext): Scope {
  const scope = context.values.get(scopeKey);
  if (!scope) throw new ConnectError("missing caller scope", Code.Unauthenticated);
  return scope;
}

export function scopeHeaders(scope: Scope): Record<string, string> {
  return { [ORGANIZATION_HEADER]: scope.organizationId, [ENVIRONMENT_HEADER]: scope.environmentId };
}

const UNSCOPED_SERVICES = new Set([Health.typeName]);

/** The header every internal call carries the process token in. */
export const INTERNAL_TOKEN_HEADER = "notify-internal-token";

/** The token of processes that set no INTERNAL_RPC_TOKEN: public, so for development only. */
const DEVELOPMENT_INTERNAL_TOKEN = "notify-development-internal-rpc-token";

/**
 * Refuses calls that do not carry the process token, so that reaching a service's port is not
 * enough to act for a tenant. Health answers anyone: probes carry no token.
 */
function internalCallerInterceptor(token: string): Interceptor {
  const expected = Buffer.from(token);
  return (next) => async (request) => {
    if (!UNSCOPED_SERVICES.has(request.service.typeName)) {
      const offered = Buffer.from(request.header.get(INTERNAL_TOKEN_HEADER) ?? "");
      if (offered.length !== expected.length || !timingSafeEqual(offered, expected)) {
        throw new ConnectError("internal calls need the notify process token", Code.Unauthenticated);
      }
    }
    return next(request);
  };
}

/** Reads the scope headers once per call, so handlers and stores never parse headers. */
const scopeInterceptor: Interceptor = (next) => async (request) => {
  if (!UNSCOPED_SERVICES.has(request.service.typeName)) {
    const organizationId = request.header.get(ORGANIZATION_HEADER);
    const environmentId = request.header.get(ENVIRONMENT_HEADER);
    if (!organizationId || !environmentId) {
      throw new ConnectError(`${ORGANIZATION_HEADER} and ${ENVIRONMENT_HEADER} headers are required`, Code.Unauthenticated);
    }
    request.contextValues.set(scopeKey, { organizationId, environmentId });
  }
  return next(request);
};

/** Postgres / network failures that mean "a dependency is down", not "the request is wrong". */
const UNAVAILABLE_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "57P01", "57P03", "53300", "08006", "08001"]);

export function isUnavailableError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === "string" && UNAVAILABLE_ERRORS.has(code)) || isRedisUnavailable(error);
}

function errorInterceptor(log: Logger): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      const method = `${request.service.typeName}/${request.method.name}`;
      if (isUnstorableText(error)) throw new ConnectError("Text with a NUL character (\\u0000) cannot be stored or searched", Code.InvalidArgument);
      if (isUnavailableError(error)) {
        log.warn({ err: error, method }, "dependency unavailable");
        throw new ConnectError("a dependency is unavailable", Code.Unavailable);
      }
      log.error({ err: error, method }, "unexpected error");
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

const rpcServerDuration = new Histogram<"service" | "method" | "code">({
  name: "notify_rpc_server_duration_seconds",
  help: "Time to answer an RPC, by service, method and gRPC status code (its _count counts calls)",
  labelNames: ["service", "method", "code"],
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

type Observer = Histogram.Internal<"service" | "method" | "code">;

/** Each method's series per status code, made once: a call only looks its series up. */
const observersOfMethod = new WeakMap<DescMethod, Map<Code | "OK", Observer>>();

function observerOf(service: DescService, method: DescMethod, code: Code | "OK"): Observer {
  let byCode = observersOfMethod.get(method);
  if (!byCode) {
    byCode = new Map();
    observersOfMethod.set(method, byCode);
  }
  let observer = byCode.get(code);
  if (!observer) {
    observer = rpcServerDuration.labels(service.typeName, method.name, code === "OK" ? "OK" : Code[code]);
    byCode.set(code, observer);
  }
  return observer;
}

/** Times every call served, outermost, so refused and failed calls are counted with their codes. */
const metricsInterceptor: Interceptor = (next) => async (request) => {
  const started = performance.now();
  try {
    const response = await next(request);
    observerOf(request.service, request.method, "OK").observe((performance.now() - started) / 1000);
    return response;
  } catch (error) {
    observerOf(request.service, request.method, ConnectError.from(error).code).observe((performance.now() - started) / 1000);
    throw error;
  }
};

/**
 * Serves each call under the request id its metadata carries (every log line of the call names
 * it) and, with tracing on, in a server span continuing the caller's trace.
 */
const originInterceptor: Interceptor = (next) => (request) =>
  UNSCOPED_SERVICES.has(request.service.typeName)
    ? next(request)
    : continueFrom(
        (name) => request.header.get(name),
        { name: `${request.service.typeName}/${request.method.name}`, kind: SpanKind.SERVER },
        () => next(request),
      );

/** What every service runs around its handlers; in-memory test transports use the same list. */
export function serverInterceptors(log: Logger): Interceptor[] {
  return [errorInterceptor(log), scopeInterceptor];
}

export interface RpcServer {
  readonly port: number;
  /** Where `/metrics` is served. */
  readonly metricsPort: number;
  /** Reports NOT_SERVING on health checks, then stops accepting calls and ends the open ones. */
  close(): Promise<void>;
}

/** What a service's routes register their implementations with (a ConnectRouter in tests). */
export interface ServiceRegistry {
  service<T extends DescService>(service: T, implementation: Partial<ServiceImpl<T>>): unknown;
}

export interface ServeOptions {
  host: string;
  port: number;
  log: Logger;
  /** INTERNAL_RPC_TOKEN: callers must present it (unset: the development token, with a warning). */
  internalToken: string | undefined;
  /** Where `/metrics` is served (on `host`); unset: the RPC port + 1000, or a free port when that is 0. */
  metricsPort?: number | undefined;
  routes: (registry: ServiceRegistry) => void;
}

/*
 * Calls between processes use @grpc/grpc-js on both ends, behind the connect-es service
 * definitions and handlers: DESIGN §5 asks for the faster transport. `pnpm bench rpc` measures
 * both: grpc-js on both ends serves more calls a second for less client and server CPU per call
 * than connect-node on both ends, and a grpc-js client of the connect-node server was slower
 * than either pair.
 */

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // No limit on message size, as before: a page of fan-out messages can carry large payloads.
  "grpc.max_receive_message_length": -1,
  "grpc.max_send_message_length": -1,
  // A peer that restarts is back within seconds, and calls fail fast until it is: reconnect
  // attempts stay frequent (gRPC's default backoff grows to two minutes, which would keep a
  // caller failing long after its peer returned from a longer outage).
  "grpc.initial_reconnect_backoff_ms": 200,
  "grpc.max_reconnect_backoff_ms": 2_000,
};

/*
 * Calls are spread over every address a service's name resolves to (a headless Service lists
 * each ready replica), not pinned to the first. A channel resolves the name only when one of its
 * connections drops, so callers open a fresh channel every few minutes (it shares the open
 * connections, and the calls under way finish on the old one), which reaches replicas added
 * since. Servers ending connections by age instead had new calls refused in the race.
 */
const CLIENT_OPTIONS: grpc.ChannelOptions = {
  ...CHANNEL_OPTIONS,
  "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  // The service config is ours, not looked up in DNS TXT records.
  "grpc.service_config_disable_resolution": 1,
};

const CHANNEL_AGE_MS = 5 * 60_000;

/** How grpc-js names, writes and reads one method's messages; made once per method. */
interface MethodCodec {
  path: string;
  serializeInput(value: unknown): Buffer;
  deserializeInput(bytes: Buffer): unknown;
  serializeOutput(value: unknown): Buffer;
  deserializeOutput(bytes: Buffer): unknown;
}

/** A message's encoding as a Buffer over the same bytes (grpc-js wants Buffers; no copy). */
function serializer(schema: DescMessage): (value: unknown) => Buffer {
  return (value) => {
    const bytes = toBinary(schema, value as MessageShape<DescMessage>);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

const codecs = new WeakMap<DescMethodUnary, MethodCodec>();

function codecOf(method: DescMethodUnary): MethodCodec {
  let codec = codecs.get(method);
  if (!codec) {
    codec = {
      path: `/${method.parent.typeName}/${method.name}`,
      serializeInput: serializer(method.input),
      deserializeInput: (bytes) => fromBinary(method.input, bytes),
      serializeOutput: serializer(method.output),
      deserializeOutput: (bytes) => fromBinary(method.output, bytes),
    };
    codecs.set(method, codec);
  }
  return codec;
}

/** A response that carries no headers or trailers: these calls send none, and nothing reads them. */
const NO_HEADERS: Headers = new Headers();

const STATUS_DETAILS = "grpc-status-details-bin";

/**
 * What a failed call's status may add to its trailers. Field errors echo the values they name:
 * trailers larger than the caller's HTTP/2 session accepts (64 KiB) failed that call, and the
 * calls after it on the channel, only at their deadlines.
 */
const MAX_STATUS_DETAILS = 8 * 1024;
const MAX_STATUS_MESSAGE = 1024;

/** The status details (base64) of `error`: without the echoed values if they are too large, none if even that is. */
function statusDetailsOf(error: ConnectError): string | null {
  const details = setTrailerStatus(new Headers(), error).get(STATUS_DETAILS);
  if (details === null || details.length <= MAX_STATUS_DETAILS) return details;
  const fields = fieldErrorsOf(error);
  if (!fields) return null;
  const withoutValues = Object.fromEntries(Object.entries(fields).map(([field, { messages }]) => [field, { messages }]));
  const smaller = setTrailerStatus(new Headers(), invalidArgument(error.rawMessage, withoutValues)).get(STATUS_DETAILS);
  return smaller !== null && smaller.length <= MAX_STATUS_DETAILS ? smaller : null;
}

/** A ConnectError as a gRPC status; its details travel as google.rpc.Status, as connect encodes them. */
function statusOf(error: ConnectError): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  const details = statusDetailsOf(error);
  if (details !== null) metadata.set(STATUS_DETAILS, Buffer.from(details, "base64"));
  const message = error.rawMessage.length > MAX_STATUS_MESSAGE ? `${error.rawMessage.slice(0, MAX_STATUS_MESSAGE)}…` : error.rawMessage;
  return { code: error.code as number as grpc.status, details: message, metadata };
}

/** A failed call's gRPC status back as the ConnectError the service raised. */
function connectErrorOf(error: grpc.ServiceError): ConnectError {
  const [details] = error.metadata?.get(STATUS_DETAILS) ?? [];
  if (details instanceof Buffer) {
    const trailer = new Headers({ "grpc-status": String(error.code), [STATUS_DETAILS]: details.toString("base64") });
    const found = findTrailerError(trailer);
    if (found) return found;
  }
  return new ConnectError(error.details, error.code as number as Code);
}

/**
 * A unary method served by grpc-js: the request runs through the same interceptors as in the
 * in-memory test transports, then the connect-es implementation with a handler context whose
 * signal aborts when the caller cancels or its deadline passes.
 */
function unaryHandler(spec: Extract<MethodImplSpec, { kind: "unary" }>, interceptors: Interceptor[]): grpc.handleUnaryCall<unknown, unknown> {
  const { method } = spec;
  const service = method.parent;
  const url = codecOf(method).path;
  const invoke = interceptors.reduceRight(
    (next, interceptor) => interceptor(next),
    async (request: UnaryRequest | StreamRequest): Promise<UnaryResponse | StreamResponse> => {
      const unary = request as UnaryRequest;
      const context: HandlerContext = {
        method,
        service,
        signal: unary.signal,
        timeoutMs: () => undefined,
        requestMethod: "POST",
        requestHeader: unary.header,
        // Nothing here sets response headers or trailers, and they are not sent.
        responseHeader: new Headers(),
        responseTrailer: new Headers(),
        protocolName: "grpc",
        values: unary.contextValues,
        url,
      };
      const output = await spec.impl(unary.message, context);
      const message = isMessage(output, method.output) ? output : create(method.output, output);
      return { stream: false, service, method, header: NO_HEADERS, trailer: NO_HEADERS, message } satisfies UnaryResponse;
    },
  );
  return (call, callback) => {
    const header = new Headers();
    for (const [key, values] of Object.entries(call.metadata.getMap())) if (typeof values === "string") header.set(key, values);
    const cancel = new AbortController();
    let answered = false;
    // grpc-js reports every call as cancelled once its status is sent: only a call still running
    // is aborted (an error and an abort event per call showed in a service's CPU profile).
    call.once("cancelled", () => {
      if (!answered) cancel.abort(new ConnectError("the call was cancelled", Code.Canceled));
    });
    const request: UnaryRequest = {
      stream: false,
      service,
      method,
      requestMethod: "POST",
      url,
      signal: cancel.signal,
      header,
      contextValues: createContextValues(),
      message: call.request as MessageShape<DescMessage>,
    };
    invoke(request).then(
      (response) => {
        answered = true;
        callback(null, (response as UnaryResponse).message);
      },
      (error: unknown) => {
        answered = true;
        callback(statusOf(ConnectError.from(error)));
      },
    );
  };
}

/** Serves gRPC over h2c with the health service and the server interceptors; only unary methods are served. */
export async function serveRpc(options: ServeOptions): Promise<RpcServer> {
  let serving = true;
  const status = () => (serving && !processStopping() ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING);
  const server = new grpc.Server(CHANNEL_OPTIONS);
  if (options.internalToken === undefined) {
    options.log.warn("INTERNAL_RPC_TOKEN is not set: internal calls are checked against a public development token; set one before real use");
  }
  const interceptors = [
    metricsInterceptor,
    originInterceptor,
    internalCallerInterceptor(options.internalToken ?? DEVELOPMENT_INTERNAL_TOKEN),
    ...serverInterceptors(options.log),
  ];
  const registry: ServiceRegistry = {
    service(service, implementation) {
      const spec = createServiceImplSpec(service, implementation);
      const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
      const handlers: grpc.UntypedServiceImplementation = {};
      for (const method of spec.service.methods) {
        const methodSpec = spec.methods[method.localName]!;
        if (methodSpec.kind !== "unary") continue;
        const codec = codecOf(methodSpec.method);
        definition[method.localName] = {
          path: codec.path,
          requestStream: false,
          responseStream: false,
          requestSerialize: codec.serializeInput,
          requestDeserialize: codec.deserializeInput,
          responseSerialize: codec.serializeOutput,
          responseDeserialize: codec.deserializeOutput,
        };
        handlers[method.localName] = unaryHandler(methodSpec, interceptors);
      }
      server.addService(definition, handlers);
      return registry;
    },
  };
  registry.service(Health, { check: () => ({ status: status() }) });
  options.routes(registry);
  const address = options.host.includes(":") ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  options.log.info({ port }, "rpc server listening");
  let metrics: MetricsServer;
  try {
    metrics = await serveMetrics(options.host, metricsPortOf(options.port, options.metricsPort), options.log);
  } catch (error) {
    server.forceShutdown();
    throw error;
  }
  return {
    port,
    metricsPort: metrics.port,
    async close() {
      serving = false;
      await metrics.close();
      await new Promise<void>((resolve) => {
        const forced = setTimeout(() => server.forceShutdown(), 5_000);
        server.tryShutdown(() => {
          clearTimeout(forced);
          resolve();
        });
      });
    },
  };
}

export interface RpcTransport {
  readonly transport: Transport;
  close(): void;
}

export interface RpcTransportOptions {
  /** INTERNAL_RPC_TOKEN, sent on every call (unset: the development token). */
  internalToken?: string | undefined;
  /** How long one channel serves before a new one is opened (and replicas added since are found). */
  channelAgeMs?: number;
}

/** The call's headers (scope headers, as a record, most often), its origin and the process token as gRPC metadata. */
function metadataOf(header: Parameters<Transport["unary"]>[3], internalToken: string, origin: Origin): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(INTERNAL_TOKEN_HEADER, internalToken);
  for (const key in origin) metadata.set(key, origin[key]!);
  if (header === undefined) return metadata;
  const entries = header instanceof Headers ? header.entries() : Array.isArray(header) ? header : Object.entries(header);
  for (const [key, value] of entries) metadata.set(key, value);
  return metadata;
}

/**
 * A transport to one service over h2c with @grpc/grpc-js: one channel shared by all its clients
 * and calls, which reconnects on its own and is renewed every `channelAgeMs`. A call that sets no
 * deadline of its own gets `defaultTimeoutMs`; aborting a call's signal cancels it.
 */
export function createRpcTransport(baseUrl: string, defaultTimeoutMs: number, options: RpcTransportOptions = {}): RpcTransport {
  const channelAgeMs = options.channelAgeMs ?? CHANNEL_AGE_MS;
  const internalToken = options.internalToken ?? DEVELOPMENT_INTERNAL_TOKEN;
  const url = new URL(baseUrl);
  // An http URL without a port means port 80, as it did for the HTTP/2 transport; gRPC's own default is 443.
  const target = url.port ? url.host : `${url.host}:80`;
  const open = () => new grpc.Client(target, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  let channel = open();
  let renewAt = Date.now() + channelAgeMs;
  const retired = new Set<grpc.Client>();
  const current = () => {
    if (Date.now() >= renewAt) {
      const old = channel;
      channel = open();
      renewAt = Date.now() + channelAgeMs;
      // Closing fails the calls still waiting for a connection: wait until their deadlines passed.
      retired.add(old);
      setTimeout(() => {
        if (retired.delete(old)) old.close();
      }, defaultTimeoutMs).unref();
    }
    return channel;
  };
  const transport: Transport = {
    unary(method, signal, timeoutMs, header, input) {
      const message = isMessage(input, method.input) ? input : create(method.input, input);
      const codec = codecOf(method);
      return tracedCall(
        { name: codec.path.slice(1), kind: SpanKind.CLIENT },
        (origin) =>
          new Promise((resolve, reject) => {
            if (signal?.aborted) {
              reject(ConnectError.from(signal.reason, Code.Canceled));
              return;
            }
            const cancel = () => call.cancel();
            const call = current().makeUnaryRequest(
              codec.path,
              codec.serializeInput,
              codec.deserializeOutput as (bytes: Buffer) => MessageShape<typeof method.output>,
              message,
              metadataOf(header, internalToken, origin),
              { deadline: Date.now() + (timeoutMs ?? defaultTimeoutMs) },
              (error, output) => {
                signal?.removeEventListener("abort", cancel);
                if (error || output === undefined) reject(error ? connectErrorOf(error) : new ConnectError("empty response", Code.Internal));
                else resolve({ stream: false, service: method.parent, method, header: NO_HEADERS, trailer: NO_HEADERS, message: output });
              },
            );
            signal?.addEventListener("abort", cancel, { once: true });
          }),
      );
    },
    stream() {
      return Promise.reject(new ConnectError("streaming calls are not served between processes", Code.Unimplemented));
    },
  };
  return {
    transport,
    close() {
      for (const old of retired) old.close();
      retired.clear();
      channel.close();
    },
  };
}

export { createClient, type Client };
