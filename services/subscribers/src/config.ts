import { z } from "zod";
import { commonEnv, loadConfig, port, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  SUBSCRIBERS_HOST: z.string().default("127.0.0.1"),
  SUBSCRIBERS_PORT: port(50051),
});

export type SubscribersConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): SubscribersConfig {
  return loadConfig(schema, env);
}
