import { createClient } from "@connectrpc/connect";
import { Health, subscribersV1 } from "@notify/proto";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/log.js";
import { cacheLookups, Counter, metricsPortOf, metricsRegistry, sampledGauge, serveMetrics } from "../src/metrics.js";
import { createRpcTransport, serveRpc } from "../src/rpc.js";

const log = createLogger("metrics-test", "silent");

/** The value of the series written exactly as `series` in a scrape, if present. */
function sampleValue(scrape: string, series: string): number | undefined {
  const line = scrape.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const server = await serveMetrics("127.0.0.1", 0, log);
afterAll(() => server.close());

async function scrape(port = server.port): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return response.text();
}

describe("metrics", () => {
  it("serves the process's default metrics and its own in the Prometheus text format", async () => {
    const counter = new Counter({ name: "notify_test_things_total", help: "things", labelNames: ["kind"], registers: [metricsRegistry] });
    counter.labels("a").inc(3);
    const text = await scrape();
    expect(text).toContain("# TYPE process_cpu_user_seconds_total counter");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
    expect(text).toContain("nodejs_eventloop_lag_p99_seconds");
    expect(sampleValue(text, 'notify_test_things_total{kind="a"}')).toBe(3);
    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
  });

  it("samples watched gauges at scrape time, until they stop being watched, and leaves out a failing sampler", async () => {
    const watch = sampledGauge("notify_test_backlog", "backlog", ["queue"]);
    let backlog = 5;
    const stop = watch(async (set) => set({ queue: "q" }, backlog));
    watch(() => Promise.reject(new Error("down")));
    expect(sampleValue(await scrape(), 'notify_test_backlog{queue="q"}')).toBe(5);
    backlog = 7;
    expect(sampleValue(await scrape(), 'notify_test_backlog{queue="q"}')).toBe(7);
    stop();
    expect(sampleValue(await scrape(), 'notify_test_backlog{queue="q"}')).toBeUndefined();
  });

  it("counts cache lookups by cache and result, caches of one name together, from zero", async () => {
    const series = (cache: string, result: string) => `notify_cache_lookups_total{cache="${cache}",result="${result}"}`;
    const keys = cacheLookups("test_keys");
    const sameKeys = cacheLookups("test_keys");
    const pages = cacheLookups("test_pages");
    expect(sampleValue(await scrape(), series("test_pages", "hit"))).toBe(0);
    keys.hit();
    sameKeys.hit();
    keys.miss();
    pages.miss();
    const text = await scrape();
    expect(sampleValue(text, series("test_keys", "hit"))).toBe(2);
    expect(sampleValue(text, series("test_keys", "miss"))).toBe(1);
    expect(sampleValue(text, series("test_pages", "hit"))).toBe(0);
    expect(sampleValue(text, series("test_pages", "miss"))).toBe(1);
  });

  it("derives a service's metrics port from its RPC port", () => {
    expect(metricsPortOf(50051, undefined)).toBe(51051);
    expect(metricsPortOf(0, undefined)).toBe(0);
    expect(metricsPortOf(50051, 9100)).toBe(9100);
  });

  it("counts the calls an RPC server answers by service, method and code, on its own metrics port", async () => {
    const rpc = await serveRpc({
      host: "127.0.0.1",
      port: 0,
      log,
      internalToken: undefined,
      routes: (registry) => registry.service(subscribersV1.SubscriberService, {}),
    });
    const transport = createRpcTransport(`http://127.0.0.1:${rpc.port}`, 2_000);
    const outsider = createRpcTransport(`http://127.0.0.1:${rpc.port}`, 2_000, { internalToken: "not-the-token-of-this-process-at-all" });
    try {
      const series = `notify_rpc_server_duration_seconds_count{service="${Health.typeName}",method="Check",code="OK"}`;
      const before = sampleValue(await scrape(rpc.metricsPort), series) ?? 0;
      const health = createClient(Health, transport.transport);
      await health.check({});
      await health.check({});
      expect(sampleValue(await scrape(rpc.metricsPort), series)).toBe(before + 2);
      await expect(createClient(subscribersV1.SubscriberService, outsider.transport).deleteSubscriber({ subscriberId: "a" })).rejects.toThrow();
      const refused = `notify_rpc_server_duration_seconds_count{service="${subscribersV1.SubscriberService.typeName}",method="DeleteSubscriber",code="Unauthenticated"}`;
      expect(sampleValue(await scrape(rpc.metricsPort), refused)).toBe(1);
    } finally {
      outsider.close();
      transport.close();
      await rpc.close();
    }
    await expect(fetch(`http://127.0.0.1:${rpc.metricsPort}/metrics`)).rejects.toThrow();
  });
});
