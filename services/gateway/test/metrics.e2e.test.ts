import { eventually, startSmtpSink, type SmtpSink } from "@notify/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIntegration, createWorkflow, delivered, settledMessage, sinkCredentials } from "./delivery-helpers.js";
import { startStack, type Stack } from "./stack.js";

let stack: Stack;
let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
  stack = await startStack({ outboundAllowedCidrs: "127.0.0.0/8" });
});
afterAll(async () => {
  await stack?.stop();
  await sink?.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a scrape in the Prometheus text format (label values here hold no quotes or commas). */
function samplesOf(text: string): Sample[] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key!, value!]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The sum of the samples of `name` whose labels include `labels`. */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  return found.length === 0 ? undefined : found.reduce((sum, sample) => sum + sample.value, 0);
}

/** The lookups of one cache counted in `samples`, by result. */
function cacheLookups(samples: Sample[], cache: string): { hit: number; miss: number } {
  const count = (result: string) => sampleValue(samples, "notify_cache_lookups_total", { cache, result }) ?? 0;
  return { hit: count("hit"), miss: count("miss") };
}

async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return samplesOf(await response.text());
}

describe("/metrics", () => {
  it("is served by the gateway on its metrics port, not the public one, with the process's default metrics", async () => {
    expect((await fetch(`${stack.url}/metrics`)).status).toBe(404);
    const response = await fetch(stack.metricsUrls.gateway);
    expect(response.status).toBe(200);
    const samples = samplesOf(await response.text());
    expect(sampleValue(samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(sampleValue(samples, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
  });

  it("counts gateway requests by route template and status, RPC calls by method and code, jobs and provider sends", async () => {
    await createIntegration(stack, {
      providerId: "nodemailer",
      channel: "email",
      identifier: "metrics-sink",
      credentials: sinkCredentials(sink),
    });
    const workflow = await createWorkflow(stack, "Metered", [{ template: { type: "email", subject: "Hello", content: "Hi {{subscriber.firstName}}" } }]);
    const before = await scrape(stack.metricsUrls.gateway);
    const triggersBefore = await scrape(stack.metricsUrls.triggers);
    const subscriberRoute = { method: "GET", route: "/v1/subscribers/:subscriberId" };
    const countedBefore = (status: string) => sampleValue(before, "notify_http_requests_total", { ...subscriberRoute, status }) ?? 0;
    for (const subscriberId of ["ada", "grace"]) {
      expect((await stack.request("POST", "/v1/subscribers", { subscriberId, firstName: subscriberId, email: `${subscriberId}@example.com` })).status).toBe(
        201,
      );
      expect((await stack.request("GET", `/v1/subscribers/${subscriberId}`)).status).toBe(200);
    }
    expect((await stack.request("GET", "/v1/subscribers/nobody")).status).toBe(404);
    expect((await stack.request("GET", "/no/such/path")).status).toBe(404);
    const trigger = await stack.request("POST", "/v1/events/trigger", { name: workflow, to: "ada", transactionId: "t-metrics-1" });
    expect(trigger.body.data.status).toBe("processed");
    await settledMessage(stack, "t-metrics-1", "email", delivered);

    const gateway = await scrape(stack.metricsUrls.gateway);
    expect(sampleValue(gateway, "notify_http_requests_total", { ...subscriberRoute, status: "200" })).toBe(countedBefore("200") + 2);
    expect(sampleValue(gateway, "notify_http_requests_total", { ...subscriberRoute, status: "404" })).toBe(countedBefore("404") + 1);
    expect(sampleValue(gateway, "notify_http_requests_total", { method: "GET", route: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1);
    // Raw paths never become series. (Matched as path segments: a word such as "Readable", a
    // stream's type in the process metrics, holds "ada" too.)
    const rawPaths = gateway.filter((sample) => Object.values(sample.labels).some((value) => /\/(ada|grace|nobody)\b|\/no\/such/.test(value)));
    expect(rawPaths).toEqual([]);
    expect(sampleValue(gateway, "notify_http_request_duration_seconds_count", subscriberRoute)).toBeGreaterThanOrEqual(3);
    expect(sampleValue(gateway, "notify_http_request_duration_seconds_count", { method: "POST", route: "/v1/events/trigger" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(gateway, "notify_gateway_socket_connections")).toBe(0);

    // A cache's lookups went both ways since `earlier`: a miss, and a hit once the copy was kept.
    const hitAndMissed = (now: Sample[], earlier: Sample[], cache: string) => {
      const [was, is] = [cacheLookups(earlier, cache), cacheLookups(now, cache)];
      return is.miss > was.miss && is.hit > was.hit;
    };
    // A feed page read once is a miss, read again unchanged a hit (announcements of the delivery may drop it in between).
    await eventually(async () => {
      expect((await stack.request("GET", "/v1/subscribers/ada/notifications/feed")).status).toBe(200);
      return hitAndMissed(await scrape(stack.metricsUrls.gateway), gateway, "gateway_feed_pages") || undefined;
    });
    // A key new to every cache misses in this process's and in Redis, then hits in this process's.
    const otherKey = await stack.createKey("Metered keys");
    for (let times = 0; times < 2; times += 1) {
      expect((await stack.request("GET", "/v1/integrations", undefined, { authorization: `ApiKey ${otherKey}` })).status).toBe(200);
    }
    const keysLater = await scrape(stack.metricsUrls.gateway);
    expect(hitAndMissed(keysLater, gateway, "gateway_api_keys")).toBe(true);
    expect(cacheLookups(keysLater, "gateway_api_keys_redis").miss).toBeGreaterThan(cacheLookups(gateway, "gateway_api_keys_redis").miss);
    // The messages service kept the subscriber and the workflow its message came from when it first
    // read them (a miss each, for the delivery or the feed): listing the message then hits both.
    const messagesBefore = await scrape(stack.metricsUrls.messages);
    await eventually(async () => {
      expect((await stack.request("GET", "/v1/messages?subscriberId=ada")).body.data).toHaveLength(1);
      const now = await scrape(stack.metricsUrls.messages);
      return (
        ["messages_subscribers", "messages_workflows"].every((cache) => {
          const [was, is] = [cacheLookups(messagesBefore, cache), cacheLookups(now, cache)];
          return is.miss >= 1 && is.hit > was.hit;
        }) || undefined
      );
    });

    const triggers = await scrape(stack.metricsUrls.triggers);
    expect(
      sampleValue(triggers, "notify_rpc_server_duration_seconds_count", { service: "notify.triggers.v1.TriggerService", method: "TriggerBatch", code: "OK" }),
    ).toBe(1);
    expect(sampleValue(triggers, "notify_triggers_outbox_backlog")).toBeGreaterThanOrEqual(0);
    // The trigger named its workflow: one lookup of the triggers service's copies.
    const [workflowsBefore, workflowsNow] = [cacheLookups(triggersBefore, "triggers_workflows"), cacheLookups(triggers, "triggers_workflows")];
    expect(workflowsNow.hit + workflowsNow.miss).toBe(workflowsBefore.hit + workflowsBefore.miss + 1);
    const subscribers = await scrape(stack.metricsUrls.subscribers);
    expect(
      sampleValue(subscribers, "notify_rpc_server_duration_seconds_count", {
        service: "notify.subscribers.v1.SubscriberService",
        method: "UpsertSubscriber",
        code: "OK",
      }),
    ).toBe(2);
    expect(sampleValue(subscribers, "notify_rpc_server_duration_seconds_bucket", { method: "UpsertSubscriber", le: "+Inf" })).toBe(2);

    const stream = stack.workerEnv.JOBS_STREAM!;
    const deliveries = stack.workerEnv.DELIVERIES_STREAM!;
    await eventually(async () => {
      const worker = await scrape(stack.metricsUrls.worker!);
      expect(sampleValue(worker, "notify_jobs_total", { stream, outcome: "done" })).toBeGreaterThanOrEqual(1);
      expect(sampleValue(worker, "notify_jobs_total", { stream: deliveries, outcome: "done" })).toBeGreaterThanOrEqual(1);
      expect(sampleValue(worker, "notify_provider_sends_total", { channel: "email", provider: "nodemailer", outcome: "sent" })).toBe(1);
      expect(sampleValue(worker, "notify_provider_send_duration_seconds_count", { provider: "nodemailer" })).toBe(1);
      expect(sampleValue(worker, "notify_jetstream_consumer_pending", { stream, consumer: "worker" })).toBe(0);
      expect(sampleValue(worker, "notify_jetstream_consumer_ack_pending", { stream: deliveries, consumer: "deliveries" })).toBe(0);
      expect(sampleValue(worker, "notify_jetstream_consumer_redelivered", { stream, consumer: "worker" })).toBe(0);
      expect(sampleValue(worker, "notify_jetstream_consumer_redelivered", { stream: deliveries, consumer: "deliveries" })).toBe(0);
      // The one send read its integration, new to the worker's cache.
      expect(cacheLookups(worker, "worker_integrations")).toEqual({ hit: 0, miss: 1 });
      return true;
    });
  });
});
