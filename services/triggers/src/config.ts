import { z } from "zod";
import { commonEnv, internalRpcEnv, jobStreamEnv, loadConfig, port, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  ...internalRpcEnv,
  TRIGGERS_HOST: z.string().default("127.0.0.1"),
  TRIGGERS_PORT: port(50054),
  ...jobStreamEnv,
});

export type TriggersConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): TriggersConfig {
  return loadConfig(schema, env);
}
