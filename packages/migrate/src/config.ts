import { commonEnv, loadConfig, type Env } from "@notify/runtime";
import { z } from "zod";

const schema = z.object({ ...commonEnv });

export type MigrateConfig = z.infer<typeof schema>;

export function readConfig(env: Env = process.env): MigrateConfig {
  return loadConfig(schema, env);
}
