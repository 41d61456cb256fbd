import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus, subscribersV1 } from "@notify/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldErrorsOf, invalidField } from "../src/errors.js";
import { createLogger } from "../src/log.js";
import { createRpcTransport, scopeHeaders, scopeOf, serveRpc, type RpcServer, type RpcTransport } from "../src/rpc.js";
import { continueFrom, currentRequestId, SpanKind } from "../src/tracing.js";

const scope = { organizationId: "org-1", environmentId: "env-1" };
const INTERNAL_TOKEN = "rpc-test-internal-token-0123456789";
const headers = scopeHeaders(scope);

/** How the last call that waited for its signal ended, seen from the handler. */
let lastAbort: Promise<unknown> | undefined;

let server: RpcServer;
let rpc: RpcTransport;
beforeAll(async () => {
  server = await serveRpc({
    host: "127.0.0.1",
    port: 0,
    log: createLogger("rpc-test", "silent"),
    internalToken: INTERNAL_TOKEN,
    routes: (registry) => {
      registry.service(subscribersV1.SubscriberService, {
        updateSubscriber: async (request, context) => {
          const { environmentId } = scopeOf(context);
          // What a log line of the handler would name as its request (log.ts reads the same).
          if (request.subscriberId === "requested") return { id: currentRequestId() ?? "", subscriberId: request.subscriberId };
          if (request.subscriberId === "invalid") throw invalidField("subscriberId", "is not valid", "invalid");
          if (request.subscriberId === "broken") throw new Error("a bug");
          if (request.subscriberId.startsWith("long")) throw invalidField("subscriberId", "is not valid", request.subscriberId);
          if (request.subscriberId === "nul") throw Object.assign(new Error("invalid byte sequence"), { code: "22021" });
          if (request.subscriberId === "slow") {
            const signal = context.signal;
            lastAbort = new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));
            await lastAbort;
          }
          return { id: environmentId, subscriberId: request.subscriberId };
        },
      });
    },
  });
  rpc = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000, { internalToken: INTERNAL_TOKEN });
});
afterAll(async () => {
  rpc?.close();
  await server?.close();
});

const subscribers = () => createClient(subscribersV1.SubscriberService, rpc.transport);

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return error as ConnectError;
  }
  throw new Error("the call succeeded");
}

describe("gRPC between processes (grpc-js on both ends)", () => {
  it("refuses callers without the process token, whatever scope they claim, and answers health checks to anyone", async () => {
    for (const internalToken of [undefined, "another-process-token-0123456789"]) {
      const stranger = createRpcTransport(`http://127.0.0.1:${server.port}`, 10_000, { internalToken });
      try {
        const refused = await failure(createClient(subscribersV1.SubscriberService, stranger.transport).updateSubscriber({ subscriberId: "ada" }, { headers }));
        expect(refused.code).toBe(Code.Unauthenticated);
        expect((await createClient(Health, stranger.transport).check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      } finally {
        stranger.close();
      }
    }
  });

  it("answers health checks and carries the caller's scope to the handler", async () => {
    expect((await createClient(Health, rpc.transport).check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const subscriber = await subscribers().updateSubscriber({ subscriberId: "ada" }, { headers });
    expect(subscriber).toMatchObject({ id: "env-1", subscriberId: "ada" });
  });

  it("runs the handler under the caller's request id, so the service's log lines name the request that caused them", async () => {
    const call = () => subscribers().updateSubscriber({ subscriberId: "requested" }, { headers });
    expect((await continueFrom(() => "request-1", { name: "caller", kind: SpanKind.SERVER }, call)).id).toBe("request-1");
    expect((await call()).id).toBe("");
  });

  it("refuses a scoped call without scope headers", async () => {
    const error = await failure(subscribers().updateSubscriber({ subscriberId: "ada" }));
    expect(error.code).toBe(Code.Unauthenticated);
  });

  it("carries a service error's code, message and field details", async () => {
    const error = await failure(subscribers().updateSubscriber({ subscriberId: "invalid" }, { headers }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe("Validation failed");
    expect(fieldErrorsOf(error)).toEqual({ subscriberId: { messages: ["is not valid"], value: "invalid" } });
  });

  it("drops echoed values too large for the trailers, keeping the call and the channel working", async () => {
    const error = await failure(subscribers().updateSubscriber({ subscriberId: `long${"x".repeat(100_000)}` }, { headers, timeoutMs: 3_000 }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(error)).toEqual({ subscriberId: { messages: ["is not valid"] } });
    expect(fieldErrorsOf(await failure(subscribers().updateSubscriber({ subscriberId: "long" }, { headers })))).toEqual({
      subscriberId: { messages: ["is not valid"], value: "long" },
    });
  });

  it("answers text Postgres cannot hold (a NUL character) as an invalid argument", async () => {
    const error = await failure(subscribers().updateSubscriber({ subscriberId: "nul" }, { headers }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/NUL character/);
  });

  it("answers an unexpected failure as internal, without its text", async () => {
    const error = await failure(subscribers().updateSubscriber({ subscriberId: "broken" }, { headers }));
    expect(error.code).toBe(Code.Internal);
    expect(error.rawMessage).toBe("internal error");
  });

  it("ends a call at its deadline, and the handler's signal aborts", async () => {
    const error = await failure(subscribers().updateSubscriber({ subscriberId: "slow" }, { headers, timeoutMs: 200 }));
    expect(error.code).toBe(Code.DeadlineExceeded);
    await expect(lastAbort).resolves.toBeInstanceOf(ConnectError);
  });

  it("cancels a call whose signal the caller aborts, and the handler's signal aborts", async () => {
    const abort = new AbortController();
    const call = subscribers().updateSubscriber({ subscriberId: "slow" }, { headers, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    expect((await failure(call)).code).toBe(Code.Canceled);
    await expect(lastAbort).resolves.toBeInstanceOf(ConnectError);
  });

  it("answers unimplemented for a method the service does not implement", async () => {
    const error = await failure(subscribers().deleteSubscriber({ subscriberId: "ada" }, { headers }));
    expect(error.code).toBe(Code.Unimplemented);
  });

  it("reports a stopped server as unavailable, and reaches it again soon after it restarts", async () => {
    const serve = (port: number) =>
      serveRpc({ host: "127.0.0.1", port, log: createLogger("rpc-test", "silent"), internalToken: undefined, routes: () => undefined });
    const first = await serve(0);
    const transport = createRpcTransport(`http://127.0.0.1:${first.port}`, 2_000);
    const health = createClient(Health, transport.transport);
    try {
      expect((await health.check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      await first.close();
      for (let attempt = 0; attempt < 4; attempt++) {
        expect((await failure(health.check({}))).code).toBe(Code.Unavailable);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const second = await serve(first.port);
      try {
        const started = Date.now();
        let status: HealthCheckResponse_ServingStatus | undefined;
        while (status === undefined && Date.now() - started < 5_000) {
          status = await health.check({}).then(
            (reply) => reply.status,
            () => undefined,
          );
          if (status === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(status).toBe(HealthCheckResponse_ServingStatus.SERVING);
        expect(Date.now() - started).toBeLessThan(3_000);
      } finally {
        await second.close();
      }
    } finally {
      transport.close();
    }
  });
});
