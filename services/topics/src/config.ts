import { z } from "zod";
import { commonEnv, rpcClientEnv, loadConfig, optionalPort, port, url, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  ...rpcClientEnv,
  TOPICS_HOST: z.string().default("127.0.0.1"),
  TOPICS_PORT: port(50053),
  /** Where /metrics is served; unset: TOPICS_PORT + 1000. */
  TOPICS_METRICS_PORT: optionalPort,
  /** Topics resolve subscriber ids through the subscribers service. */
  SUBSCRIBERS_URL: url("http://127.0.0.1:50051"),
});

export type TopicsConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): TopicsConfig {
  return loadConfig(schema, env);
}
