import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BODY_DEPTH } from "../src/body.js";
import { startStack, type Stack } from "./stack.js";

// Whatever a client sends, the answer is a 2xx or a 4xx with the JSON error body, never a 5xx,
// and it comes at once. Each kind of value below once found a route that answered otherwise
// (a NUL character reaching Postgres, a field error echoing a 100,000-character value).

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.request("POST", "/v1/subscribers", { subscriberId: "hostile" });
  await stack.request("POST", "/v1/topics", { key: "hostile-topic", name: "Hostile" });
});
afterAll(() => stack?.stop());

const HUGE = "x".repeat(100_000);
const VALUES: unknown[] = [HUGE, "nul\u0000", "", "\u202e😀", -1, 1e308, 1.5, true, null, [], {}, [HUGE], { nested: { deeper: HUGE } }];

/** Routes with a body, each made from one hostile value. */
const BODIES: [string, string, (value: unknown) => unknown][] = [
  ["POST", "/v1/subscribers", (value) => ({ subscriberId: value, firstName: value, data: value })],
  ["POST", "/v2/subscribers", (value) => ({ subscriberId: "hostile-2", email: value, phone: value })],
  ["PUT", "/v1/subscribers/hostile", (value) => ({ locale: value, avatar: value })],
  ["PUT", "/v1/subscribers/hostile/credentials", (value) => ({ providerId: value, credentials: { deviceTokens: value } })],
  ["PATCH", "/v1/subscribers/hostile/preferences", (value) => ({ enabled: value, channel: { type: value, enabled: value } })],
  ["POST", "/v1/subscribers/hostile/messages/mark-as", (value) => ({ messageId: value, markAs: "read" })],
  ["POST", "/v1/subscribers/hostile/messages/mark-all", (value) => ({ markAs: "seen", feedIdentifier: value })],
  ["POST", "/v1/topics", (value) => ({ key: value, name: value })],
  ["POST", "/v1/topics/hostile-topic/subscribers", (value) => ({ subscribers: value })],
  ["POST", "/v2/topics/hostile-topic/subscriptions", (value) => ({ subscriberIds: value })],
  ["POST", "/v1/integrations", (value) => ({ providerId: "sendgrid", channel: "email", credentials: { apiKey: value }, name: value })],
  ["POST", "/v1/workflows", (value) => ({ name: "Hostile", steps: [{ template: { type: "in_app", content: value } }] })],
  ["POST", "/v1/tenants", (value) => ({ identifier: value, name: value, data: value })],
  ["POST", "/v1/events/trigger", (value) => ({ name: value, to: value, payload: { value }, overrides: value, transactionId: value })],
  ["POST", "/v1/events/trigger/bulk", (value) => ({ events: [{ name: "hostile", to: value }, value] })],
  ["POST", "/v1/events/trigger/broadcast", (value) => ({ name: value, payload: value })],
];

/** Path and query segments a client can put anywhere. */
const SEGMENTS = ["%00", "x".repeat(3000), "%E0%A4%A", "a%2F..%2F"];
const PATHS = (segment: string) => [
  ["GET", `/v1/subscribers/${segment}`],
  ["GET", `/v1/subscribers/${segment}/notifications/unseen?limit=${segment}`],
  ["GET", `/v1/subscribers/hostile/notifications/feed?feedIdentifier=${segment}&page=${segment}`],
  ["GET", `/v1/messages?subscriberId=${segment}&transactionId=${segment}`],
  ["DELETE", `/v1/messages/transaction/${segment}`],
  ["DELETE", `/v1/messages/${segment}`],
  ["GET", `/v1/topics/${segment}`],
  ["DELETE", `/v2/topics/hostile-topic/subscriptions?subscriberIds=${segment}`],
  ["GET", `/v1/integrations/${segment}`],
  ["DELETE", `/v1/events/trigger/${segment}`],
  ["PATCH", `/v1/tenants/${segment}`],
];

async function expectAnsweredWell(method: string, path: string, body?: unknown) {
  const started = Date.now();
  const reply = await stack.request(method, path, body);
  const what = `${method} ${path.slice(0, 80)} ${JSON.stringify(body)?.slice(0, 80) ?? ""}`;
  expect(reply.status, what).toBeLessThan(500);
  if (reply.status >= 400) expect(reply.body?.statusCode, what).toBe(reply.status);
  expect(Date.now() - started, what).toBeLessThan(5_000);
}

describe("hostile input", () => {
  it("answers every body route with a 2xx or a JSON 4xx, whatever the values", async () => {
    for (const [method, path, make] of BODIES) for (const value of VALUES) await expectAnsweredWell(method, path, make(value));
  });

  it("answers every path and query with a 2xx or a JSON 4xx, whatever the segments", async () => {
    for (const segment of SEGMENTS) for (const [method, path] of PATHS(segment)) await expectAnsweredWell(method!, path!, method === "PATCH" ? {} : undefined);
  });

  it("refuses bodies nested deeper than the bound with a JSON 400, however deep, and never echoes a nested value", async () => {
    // JSON text built as text: the test's own JSON.stringify would overflow on these values.
    const arrays = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;
    const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const deep: [string, string][] = [
      ["/v1/subscribers", `{"subscriberId":${arrays(4_500)}}`],
      ["/v1/events/trigger", `{"name":"hostile","to":"hostile","payload":${objects(5_000)}}`],
      ["/v1/events/trigger", `{"name":"hostile","to":"hostile","payload":{"list":${arrays(100_000)}}}`],
      ["/v1/subscribers", `{"subscriberId":"deep","data":${objects(MAX_BODY_DEPTH)}}`],
    ];
    for (const [path, text] of deep) {
      const reply = await stack.request("POST", path, text);
      expect(reply.status, path).toBe(400);
      expect(reply.body).toMatchObject({ statusCode: 400, path, message: `Request body is nested too deeply: at most ${MAX_BODY_DEPTH} levels` });
    }
    // At the bound, a body is read and validated as any other: the nested value is refused, not echoed.
    const atBound = await stack.request("POST", "/v1/subscribers", `{"subscriberId":${arrays(MAX_BODY_DEPTH - 1)}}`);
    expect(atBound.status).toBe(422);
    expect(atBound.body.errors.subscriberId).toEqual({ messages: ["subscriberId must be a string"] });
    const stored = await stack.request("POST", "/v1/subscribers", `{"subscriberId":"deep","data":${objects(MAX_BODY_DEPTH - 1)}}`);
    expect(stored.status).toBe(201);
  });

  it("fails a request holding a NUL character alone, not the reads batched with it", async () => {
    // Subscribers no service has seen yet: their lookups travel in one batch with the bad ones.
    const fresh = Array.from({ length: 10 }, (_, index) => `nul-neighbour-${index}`);
    for (const subscriberId of fresh) await stack.request("POST", "/v1/subscribers", { subscriberId });
    const replies = await Promise.all([
      ...fresh.flatMap((subscriberId) => [
        stack.request("GET", `/v1/subscribers/${subscriberId}/notifications/unseen`),
        stack.request("GET", `/v1/subscribers/${subscriberId}/notifications/feed`),
      ]),
      ...fresh.flatMap(() => [
        stack.request("GET", "/v1/subscribers/a%00b/notifications/unseen"),
        stack.request("GET", "/v1/subscribers/hostile/notifications/feed?feedIdentifier=news%00"),
      ]),
    ]);
    const good = replies.slice(0, 2 * fresh.length);
    const bad = replies.slice(2 * fresh.length);
    expect(good.map((reply) => reply.status)).toEqual(good.map(() => 200));
    expect(bad.map((reply) => reply.status)).toEqual(bad.map(() => 422));
    expect(bad[0]!.body.errors).toHaveProperty("subscriberId");
    expect(bad[1]!.body.errors).toHaveProperty("feedIdentifier");
  });
});
