import type { RouterContext } from "@koa/router";
import { Counter, Histogram, LATENCY_BUCKETS, metricsRegistry, sampledGauge } from "@notify/runtime";
import type { Context } from "koa";

const httpRequests = new Counter<"method" | "route" | "status">({
  name: "notify_http_requests_total",
  help: "HTTP requests answered, by method, route template (unmatched for paths no route has) and status",
  labelNames: ["method", "route", "status"],
  registers: [metricsRegistry],
});

const httpDuration = new Histogram<"method" | "route">({
  name: "notify_http_request_duration_seconds",
  help: "Time to answer an HTTP request, by method and route template",
  labelNames: ["method", "route"],
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const rateLimitRejections = new Counter<"category">({
  name: "notify_gateway_rate_limit_rejections_total",
  help: "API requests refused with 429 by the rate limits, by category",
  labelNames: ["category"],
  registers: [metricsRegistry],
});

/** Watches a count of the Inbox sockets connected to this process; answers the function that stops. */
export const watchSocketConnections = sampledGauge("notify_gateway_socket_connections", "Inbox sockets connected to this process", []);

/** Where a request is counted when no route matched it: raw paths would make the series unbounded. */
const UNMATCHED = "unmatched";

interface RouteSeries {
  duration: Histogram.Internal<"method" | "route">;
  byStatus: Map<number, Counter.Internal>;
}

/** The series of each method and route template, made on first use: a request only looks them up. */
const seriesByMethod = new Map<string, Map<string, RouteSeries>>();

function routeSeriesOf(method: string, route: string): RouteSeries {
  let byRoute = seriesByMethod.get(method);
  if (!byRoute) {
    byRoute = new Map();
    seriesByMethod.set(method, byRoute);
  }
  let series = byRoute.get(route);
  if (!series) {
    series = { duration: httpDuration.labels(method, route), byStatus: new Map() };
    byRoute.set(route, series);
  }
  return series;
}

/** Counts and times a request by its route's template, once its status is final. */
export function countRequest(ctx: Context, started: number): void {
  const route = (ctx as Context & Partial<Pick<RouterContext, "routerPath">>).routerPath ?? UNMATCHED;
  const series = routeSeriesOf(ctx.method, route);
  series.duration.observe((performance.now() - started) / 1000);
  const status = ctx.status;
  let requests = series.byStatus.get(status);
  if (!requests) {
    requests = httpRequests.labels(ctx.method, route, String(status));
    series.byStatus.set(status, requests);
  }
  requests.inc();
}
