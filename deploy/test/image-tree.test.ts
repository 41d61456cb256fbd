import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { eventually, freePort } from "@notify/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The README's set-up (scripts/setup.sh) runs twice on a scratch copy of the repository, changing
// nothing the second time. The Dockerfile's build stage is scripts/image-tree.sh: this runs the
// same script on that copy, then starts every process from its result, as the image would.
// The copy's builds share this checkout's build cache: its files are the same, so compiling them
// again would prove nothing that building this checkout (which the tests depend on) has not.

const run = promisify(execFile);
const repository = fileURLToPath(new URL("../..", import.meta.url));
const PROCESSES = ["gateway", "subscribers", "integrations", "topics", "triggers", "messages", "worker", "migrate"];
const SERVICES = ["subscribers", "integrations", "topics", "triggers", "messages"];

let scratch: string;
let image: string;
/** What the second run of scripts/setup.sh printed. */
let setupAgain: string;
const database = `image_tree_${process.pid}_${Date.now()}`;
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
const children: ChildProcess[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "notify-image-"));
  // What the Docker build context holds: the tracked and not-ignored files, no node_modules or dist.
  await run("bash", ["-c", `git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "${scratch}"`], { cwd: repository });
  const options = {
    cwd: scratch,
    env: { ...process.env, CI: "true", TURBO_CACHE_DIR: process.env.TURBO_CACHE_DIR ?? join(repository, ".turbo/cache") },
    maxBuffer: 64 * 1024 * 1024,
  };
  const setup = () => run("bash", [join(scratch, "scripts/setup.sh")], options);
  await setup();
  setupAgain = (await setup()).stdout;
  image = join(scratch, "image");
  await run("bash", [join(scratch, "scripts/image-tree.sh"), image], options);
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  if (scratch) await rm(scratch, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres" });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

describe("the README's set-up (scripts/setup.sh)", () => {
  it("changes nothing when run again: dependencies up to date, every build step from the cache", () => {
    expect(setupAgain).toContain("Already up to date");
    expect(setupAgain).toMatch(/Cached:\s+[1-9]\d* cached/);
    expect(setupAgain).not.toContain("cache miss");
  });
});

describe("the image's tree (scripts/image-tree.sh)", () => {
  it("holds every process with its compiled code and production dependencies only", async () => {
    expect((await readdir(image)).sort()).toEqual([...PROCESSES].sort());
    for (const name of PROCESSES) {
      const entries = await readdir(join(image, name));
      expect(entries).toContain("dist");
      expect(entries).not.toContain("src");
      expect(entries).not.toContain("test");
      expect(existsSync(join(image, name, "node_modules", "vitest"))).toBe(false);
      expect(existsSync(join(image, name, "node_modules", "typescript"))).toBe(false);
    }
    expect(existsSync(join(image, "worker", "migrations"))).toBe(true);
  });

  // Its own budget: seven processes starting while CI runs the other packages' tests can take longer
  // than the default; the two readiness waits bound it.
  it("migrates a new database, twice without harm, and starts every process from the tree", { timeout: 150_000 }, async () => {
    const migrate = () =>
      run(process.execPath, ["migrate/dist/migrate.js"], { cwd: image, env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" } });
    await migrate();
    await migrate();

    const suffix = `${process.pid}_${Date.now()}`;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "warn",
      JOBS_STREAM: `IMAGE_JOBS_${suffix}`,
      JOBS_SUBJECT_PREFIX: `image.${suffix}.jobs`,
      DELIVERIES_STREAM: `IMAGE_DELIVERIES_${suffix}`,
      DELIVERIES_SUBJECT_PREFIX: `image.${suffix}.deliveries`,
      INTEGRATIONS_ENCRYPTION_KEY: "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
      BOOTSTRAP_API_KEY: `image-tree-key-${suffix}`,
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_PORT: String(await freePort()),
      GATEWAY_METRICS_PORT: String(await freePort()),
      WORKER_PORT: String(await freePort()),
    };
    for (const name of SERVICES) {
      const port = String(await freePort());
      env[`${name.toUpperCase()}_PORT`] = port;
      env[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${port}`;
      env[`${name.toUpperCase()}_METRICS_PORT`] = String(await freePort());
    }
    for (const name of [...SERVICES, "worker", "gateway"]) {
      const child = spawn(process.execPath, [`${name}/dist/server.js`], { cwd: image, env, stdio: "ignore" });
      children.push(child);
    }
    const gateway = `http://127.0.0.1:${env.GATEWAY_PORT}`;
    await eventually(async () => ((await fetch(`${gateway}/readyz/dependencies`)).status === 200 ? true : undefined), 60_000, 250);
    await eventually(async () => ((await fetch(`http://127.0.0.1:${env.WORKER_PORT}/readyz`)).status === 200 ? true : undefined), 60_000, 250);
    const listed = await fetch(`${gateway}/v1/subscribers`, { headers: { authorization: `ApiKey ${env.BOOTSTRAP_API_KEY}` } });
    expect(listed.status).toBe(200);
    for (const child of children) expect(child.exitCode).toBeNull();
  });
});
