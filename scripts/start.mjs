// Starts every service and the gateway as child processes; Ctrl-C stops them all.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { entryOf, gateway, serviceEnv, services } from "./services.mjs";

const env = { ...process.env, ...serviceEnv() };
const children = [];
let stopping = false;

function run(name) {
  const child = spawn(process.execPath, [fileURLToPath(entryOf(name))], { env, stdio: ["ignore", "inherit", "inherit"] });
  child.on("exit", (code, signal) => {
    if (stopping) return;
    console.error(`${name} exited (${signal ?? code}); stopping everything`);
    stop(1);
  });
  children.push(child);
}

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  const alive = children.filter((child) => child.exitCode === null);
  for (const child of alive) child.kill("SIGTERM");
  let pending = alive.length;
  if (pending === 0) process.exit(code);
  for (const child of alive) child.on("exit", () => --pending === 0 && process.exit(code));
  setTimeout(() => process.exit(code), 10_000).unref();
}

process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

const migrate = spawn(process.execPath, [fileURLToPath(new URL("../packages/migrate/dist/migrate.js", import.meta.url))], { env, stdio: "inherit" });
migrate.on("exit", (code) => {
  if (code !== 0) process.exit(code ?? 1);
  for (const { name } of services) run(name);
  run(gateway.name);
  const port = env.GATEWAY_PORT ?? gateway.port;
  console.log(`\nnotify is starting: API on http://localhost:${port} (probes: /livez, /readyz)`);
  console.log("An API key: set BOOTSTRAP_API_KEY, use the one printed on the first start, or run `pnpm notify keys create`.\n");
});
