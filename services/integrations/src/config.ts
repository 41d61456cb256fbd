import { z } from "zod";
import { commonEnv, encryptionKeyVariable, internalRpcEnv, loadConfig, optionalPort, port, type Env } from "@notify/runtime";

const schema = z.object({
  ...commonEnv,
  ...internalRpcEnv,
  INTEGRATIONS_HOST: z.string().default("127.0.0.1"),
  INTEGRATIONS_PORT: port(50052),
  /** Where /metrics is served; unset: INTEGRATIONS_PORT + 1000. */
  INTEGRATIONS_METRICS_PORT: optionalPort,
  /** Seals the secret credential fields at rest; without it a public development key is used. */
  INTEGRATIONS_ENCRYPTION_KEY: encryptionKeyVariable(),
});

export type IntegrationsConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): IntegrationsConfig {
  return loadConfig(schema, env);
}
