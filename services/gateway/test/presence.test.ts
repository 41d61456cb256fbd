import { randomBytes } from "node:crypto";
import { connectRedis, createLogger, type Redis, type Scope } from "@notify/runtime";
import { eventually } from "@notify/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPresence, type Presence, type PresenceDeps } from "../src/presence.js";

const hex24 = () => randomBytes(12).toString("hex");
const scope: Scope = { organizationId: hex24(), environmentId: hex24() };
const log = createLogger("presence-test", "silent");

let redis: Redis;
const started: Presence[] = [];

beforeAll(async () => {
  redis = await connectRedis("redis://127.0.0.1:6379");
});

afterAll(async () => {
  await Promise.all(started.map((presence) => presence.stop()));
  await redis.quit();
});

/**
 * The subscribers service as presence calls reach it: the last call recorded has the last word,
 * as in its table. A gateway's offline (or online) calls can be held back, as a slow network would.
 */
function subscribersService() {
  const isOnline = new Map<string, boolean>();
  const calls: { gateway: string; isOnline: boolean }[] = [];
  const holds: { gateway: string; isOnline: boolean; released: Promise<void> }[] = [];
  /** Calls arrived but held back, not yet recorded. */
  const waiting: { gateway: string; isOnline: boolean }[] = [];
  return {
    isOnline,
    calls,
    waiting,
    /** Holds `gateway`'s calls of `online` until the answer is called. */
    hold(gateway: string, online = false): () => void {
      let release!: () => void;
      holds.push({ gateway, isOnline: online, released: new Promise((resolve) => (release = resolve)) });
      return release;
    },
    clientOf(gateway: string): PresenceDeps["subscribers"] {
      return {
        setSubscribersOnline: (async (request: { subscriberIds: string[]; isOnline: boolean }) => {
          const holding = holds.find((held) => held.gateway === gateway && held.isOnline === request.isOnline);
          if (holding) {
            const call = { gateway, isOnline: request.isOnline };
            waiting.push(call);
            await holding.released;
            waiting.splice(waiting.indexOf(call), 1);
          }
          calls.push({ gateway, isOnline: request.isOnline });
          for (const subscriberId of request.subscriberIds) isOnline.set(subscriberId, request.isOnline);
          return {};
        }) as unknown as PresenceDeps["subscribers"]["setSubscribersOnline"],
      };
    },
  };
}

/** Two gateways of one deployment, sharing one Redis connection so their commands keep their order. */
function gatewaysOf(service: ReturnType<typeof subscribersService>) {
  const deployment = randomBytes(8).toString("hex");
  const gateway = (name: string) => {
    const presence = createPresence({ redis, subscribers: service.clientOf(name), log, deployment, timeoutMs: 60_000 });
    started.push(presence);
    return presence;
  };
  return { a: gateway("a"), b: gateway("b") };
}

it("keeps a subscriber online when another gateway's open is recorded before this one's close", async () => {
  const service = subscribersService();
  const { a, b } = gatewaysOf(service);
  const subscriberId = `sub-${hex24()}`;

  a.opened(scope, subscriberId);
  await eventually(async () => expect(service.isOnline.get(subscriberId)).toBe(true));

  // The socket moves from gateway a to gateway b; a's offline call arrives last.
  const release = service.hold("a");
  a.closed(scope, subscriberId, () => false);
  b.opened(scope, subscriberId);
  await eventually(async () => expect(service.calls).toContainEqual({ gateway: "b", isOnline: true }));
  release();
  await eventually(async () => expect(service.calls.some((call) => call.gateway === "a" && !call.isOnline)).toBe(true));

  // Gateway b still holds a socket: gateway a, finding it so, records the subscriber online again.
  await eventually(async () => expect(service.calls.at(-1)).toEqual({ gateway: "a", isOnline: true }));
  expect(service.isOnline.get(subscriberId)).toBe(true);
});

it("ends offline when a gateway's late online call, made for a socket that closed meanwhile, lands last", async () => {
  const service = subscribersService();
  const { a, b } = gatewaysOf(service);
  const subscriberId = `sub-${hex24()}`;
  a.opened(scope, subscriberId);
  await eventually(async () => expect(service.isOnline.get(subscriberId)).toBe(true));

  // Gateway a records its close while the subscriber opens on gateway b: finding b holding it,
  // a records it online again, and that call is held back.
  const releaseOffline = service.hold("a", false);
  const releaseOnline = service.hold("a", true);
  a.closed(scope, subscriberId, () => false);
  await eventually(async () => expect(service.waiting).toEqual([{ gateway: "a", isOnline: false }]));
  b.opened(scope, subscriberId);
  await eventually(async () => expect(service.calls.at(-1)).toEqual({ gateway: "b", isOnline: true }));
  releaseOffline();
  await eventually(async () => expect(service.waiting).toEqual([{ gateway: "a", isOnline: true }]));

  // b's socket closes at once: b records the subscriber offline, before a's online call lands.
  b.closed(scope, subscriberId, () => false);
  await eventually(async () => expect(service.calls.at(-1)).toEqual({ gateway: "b", isOnline: false }));
  releaseOnline();

  // No gateway holds a socket: gateway a, reading so after its online call, records it offline again.
  await eventually(async () => expect(service.calls.at(-1)).toEqual({ gateway: "a", isOnline: false }));
  expect(service.isOnline.get(subscriberId)).toBe(false);
});

it("leaves a subscriber offline when no gateway holds a socket of it any more", async () => {
  const service = subscribersService();
  const { a, b } = gatewaysOf(service);
  const subscriberId = `sub-${hex24()}`;

  a.opened(scope, subscriberId);
  b.opened(scope, subscriberId);
  await eventually(async () => expect(new Set(service.calls.map((call) => call.gateway))).toEqual(new Set(["a", "b"])));
  a.closed(scope, subscriberId, () => false);
  b.closed(scope, subscriberId, () => false);

  await eventually(async () => expect(service.isOnline.get(subscriberId)).toBe(false));
  // Nothing comes back online after the offline call.
  const offlineAt = service.calls.length;
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(service.calls.slice(offlineAt - 1)).toEqual([{ gateway: "b", isOnline: false }]);
});

it("records a socket opened as the gateway starts once, and in Redis for a sweep to find", async () => {
  const service = subscribersService();
  const deployment = randomBytes(8).toString("hex");
  const subscriberId = `sub-${hex24()}`;
  // A gateway of a short timeout, with a socket opened before its first heartbeat is written.
  const starting = createPresence({ redis, subscribers: service.clientOf("a"), log, deployment, timeoutMs: 1_000 });
  started.push(starting);
  starting.opened(scope, subscriberId);
  await eventually(async () => expect(service.isOnline.get(subscriberId)).toBe(true));
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(service.calls).toEqual([{ gateway: "a", isOnline: true }]);

  // It goes silent: another gateway of the deployment sweeps the subscriber offline.
  await starting.stop();
  started.push(createPresence({ redis, subscribers: service.clientOf("b"), log, deployment, timeoutMs: 1_000 }));
  await eventually(async () => expect(service.isOnline.get(subscriberId)).toBe(false));
});
