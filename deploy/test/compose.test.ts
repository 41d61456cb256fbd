import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

// compose.yaml as Compose itself reads it (`config` validates and resolves it; no daemon needed).

const run = promisify(execFile);
const repository = fileURLToPath(new URL("../..", import.meta.url));

/** `docker compose` where the plugin is installed, else the standalone docker-compose. */
async function composeCommand(): Promise<string[]> {
  try {
    await run("docker", ["compose", "version"]);
    return ["docker", "compose"];
  } catch {
    return ["docker-compose"];
  }
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "notify-compose-"));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function config(env: string): Promise<{ services: Record<string, { command?: string[]; environment?: Record<string, string>; read_only?: boolean }> }> {
  const envFile = join(scratch, "env");
  await writeFile(envFile, env);
  const [command, ...args] = await composeCommand();
  const { stdout } = await run(command!, [...args, "--env-file", envFile, "-f", join(repository, "compose.yaml"), "config"]);
  return parse(stdout);
}

const example = () => readFile(join(repository, ".env.example"), "utf8");
const filled = async () =>
  (await example())
    .replace(/^POSTGRES_PASSWORD=.*$/m, "POSTGRES_PASSWORD=secret")
    .replace(/^(\w+_ENCRYPTION_KEY|INTERNAL_RPC_TOKEN)=$/gm, `$1=${"ab".repeat(32)}`);

describe("compose.yaml", () => {
  it("is valid with .env.example filled in, and runs migrate and every process read-only", async () => {
    const { services } = await config(await filled());
    expect(Object.keys(services).sort()).toEqual(
      ["gateway", "integrations", "messages", "migrate", "nats", "postgres", "redis", "subscribers", "topics", "triggers", "worker"].sort(),
    );
    for (const name of ["gateway", "integrations", "messages", "subscribers", "topics", "triggers", "worker"]) {
      expect(services[name]!.command).toEqual(["node", `${name}/dist/server.js`]);
      expect(services[name]!.read_only).toBe(true);
      expect(services[name]!.environment!.DATABASE_URL).toBe("postgres://notify:secret@postgres:5432/notify");
    }
    expect(services.migrate!.command).toEqual(["node", "migrate/dist/migrate.js"]);
  });

  it("refuses to start without the secrets .env.example asks for", async () => {
    await expect(config(await example())).rejects.toThrow(/POSTGRES_PASSWORD|ENCRYPTION_KEY/);
  });
});
