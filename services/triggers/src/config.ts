import { z } from "zod";
import { commonEnv, internalRpcEnv, jobStreamEnv, loadConfig, notificationRetentionEnv, optionalPort, port, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  ...internalRpcEnv,
  TRIGGERS_HOST: z.string().default("127.0.0.1"),
  TRIGGERS_PORT: port(50054),
  /** Where /metrics is served; unset: TRIGGERS_PORT + 1000. */
  TRIGGERS_METRICS_PORT: optionalPort,
  ...jobStreamEnv,
  /** A trigger's transactionId stays taken, and the trigger cancellable, while its notification is kept. */
  ...notificationRetentionEnv,
});

export type TriggersConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): TriggersConfig {
  return loadConfig(schema, env);
}
