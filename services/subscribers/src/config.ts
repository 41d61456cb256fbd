import { z } from "zod";
import { commonEnv, jobStreamEnv, rpcClientEnv, loadConfig, optionalPort, port, url, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  ...rpcClientEnv,
  SUBSCRIBERS_HOST: z.string().default("127.0.0.1"),
  SUBSCRIBERS_PORT: port(50051),
  /** Where /metrics is served; unset: SUBSCRIBERS_PORT + 1000. */
  SUBSCRIBERS_METRICS_PORT: optionalPort,
  /** Channel credentials bind to the active integrations of the integrations service. */
  INTEGRATIONS_URL: url("http://127.0.0.1:50052"),
  /** Preferences resolve over the workflow catalogue, which the triggers process serves. */
  TRIGGERS_URL: url("http://127.0.0.1:50054"),
  /**
   * Changes of subscribers are announced on NATS, for the copies other services keep (runtime
   * changes.ts); deletes put a job on the job stream for the worker.
   */
  ...jobStreamEnv,
});

export type SubscribersConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): SubscribersConfig {
  return loadConfig(schema, env);
}
