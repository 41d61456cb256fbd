import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "./log.js";

/**
 * The process's one registry: every metric of every module of the process lands here, so that
 * processes running several services (the test stack) still serve one consistent set.
 */
export const metricsRegistry = new Registry();

/**
 * How often the event loop's delay is sampled for the lag histogram (nodejs_eventloop_lag_p99_seconds
 * and its kin). Each sample is a timer that wakes an idle process, and prom-client's default of a
 * few milliseconds made those wake-ups most of what an idle process spent. Stalls longer than this
 * are still always seen; the scrape's own nodejs_eventloop_lag_seconds needs no timer at all.
 */
const EVENT_LOOP_SAMPLE_MS = 100;
collectDefaultMetrics({ register: metricsRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

export { Counter, Gauge, Histogram };

/** Latency buckets (seconds) for requests and calls answered in well under a second, mostly. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The scrape: the registry in the Prometheus text format. */
export async function scrapeMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}

/** Answers a node:http request with the scrape, or 500 when a collector failed. */
export function metricsHandler(_request: IncomingMessage, response: ServerResponse): void {
  scrapeMetrics().then(
    ({ contentType, body }) => response.writeHead(200, { "content-type": contentType }).end(body),
    () => response.writeHead(500, { "content-type": "text/plain" }).end("metrics collection failed\n"),
  );
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** One cache's lookups, counted in `notify_cache_lookups_total`. */
export interface CacheLookups {
  hit(): void;
  miss(): void;
}

/** Each cache's lookups so far, by the cache's name. */
const cacheCounts = new Map<string, { hit: number; miss: number }>();

new Counter<"cache" | "result">({
  name: "notify_cache_lookups_total",
  help: "Lookups in the process's caches, by cache and result (hit: answered from the cache; the hit ratio is hit / all)",
  labelNames: ["cache", "result"],
  registers: [metricsRegistry],
  // Read at scrape time: a labelled child's inc() hashes its labels on every call, which a
  // lookup on a hot path should not pay for.
  collect() {
    this.reset();
    for (const [cache, counts] of cacheCounts) {
      this.inc({ cache, result: "hit" }, counts.hit);
      this.inc({ cache, result: "miss" }, counts.miss);
    }
  },
});

/**
 * What counts the lookups of the cache called `cache` (caches of one name in a process add up).
 * Its series are scraped from now on, at zero until a lookup.
 */
export function cacheLookups(cache: string): CacheLookups {
  const counts = cacheCounts.get(cache) ?? { hit: 0, miss: 0 };
  cacheCounts.set(cache, counts);
  return {
    hit: () => {
      counts.hit += 1;
    },
    miss: () => {
      counts.miss += 1;
    },
  };
}

/** A small HTTP server answering `/metrics` (and 404 otherwise), for processes without an HTTP port of their own. */
export async function serveMetrics(host: string, port: number, log: Logger): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (request.url === "/metrics") metricsHandler(request, response);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  log.info({ port: bound }, "metrics listening");
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** A service's metrics port: the configured one, else its RPC port + 1000 (a free one when the RPC port is). */
export function metricsPortOf(rpcPort: number, configured: number | undefined): number {
  return configured ?? (rpcPort === 0 ? 0 : rpcPort + 1000);
}

/** Sets one sample of a sampled gauge. */
export type SampleSetter<L extends string> = (labels: Partial<Record<L, string>>, value: number) => void;

/** Reads current values for a sampled gauge; it may be slow or fail, which only skips its samples. */
export type Sampler<L extends string> = (set: SampleSetter<L>) => Promise<void>;

/** How long a scrape waits for one sampler before leaving its samples out. */
const SAMPLE_TIMEOUT_MS = 2_000;

/**
 * A gauge whose values are read at scrape time from whatever is watched (consumers, a table),
 * not kept up to date on the hot path. `watch` answers the function that stops watching.
 */
export function sampledGauge<L extends string>(name: string, help: string, labelNames: readonly L[]): (sampler: Sampler<L>) => () => void {
  const samplers = new Set<Sampler<L>>();
  new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      const set: SampleSetter<L> = (labels, value) => this.set(labels, value);
      await Promise.all(
        [...samplers].map((sampler) => {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<void>((resolve) => {
            timer = setTimeout(resolve, SAMPLE_TIMEOUT_MS);
          });
          return Promise.race([sampler(set).catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
        }),
      );
    },
  });
  return (sampler) => {
    samplers.add(sampler);
    return () => samplers.delete(sampler);
  };
}
