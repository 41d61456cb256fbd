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
  /**
   * Recipients whose id breaks Novu's rule (letters, digits and _:.- or an email-like id):
   * `dry-run` logs and notifies them, as Novu does by default; `enforce` drops them, as Novu does
   * with IS_SUBSCRIBER_ID_VALIDATION_DRY_RUN_ENABLED=false.
   */
  SUBSCRIBER_ID_VALIDATION: z.enum(["dry-run", "enforce"]).default("dry-run"),
  /** A trigger's transactionId stays taken, and the trigger cancellable, while its notification is kept. */
  ...notificationRetentionEnv,
});

export type TriggersConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): TriggersConfig {
  return loadConfig(schema, env);
}
