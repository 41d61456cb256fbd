import { z } from "zod";
import { commonEnv, loadConfig, port, type Env } from "@notify/runtime";
import { KEY_BYTES, MIN_PASSPHRASE, parseKey } from "./secrets.js";

const schema = z.object({
  ...commonEnv,
  INTEGRATIONS_HOST: z.string().default("127.0.0.1"),
  INTEGRATIONS_PORT: port(50052),
  /** Seals the secret credential fields at rest; without it a public development key is used. */
  INTEGRATIONS_ENCRYPTION_KEY: z
    .string()
    .optional()
    .transform((text, context) => {
      if (text === undefined || text === "") return undefined;
      const key = parseKey(text);
      if (!key) {
        context.addIssue({
          code: "custom",
          message: `must be ${KEY_BYTES} bytes as 64 hex characters or base64, or a passphrase of at least ${MIN_PASSPHRASE} characters`,
        });
      }
      return key;
    }),
});

export type IntegrationsConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): IntegrationsConfig {
  return loadConfig(schema, env);
}
