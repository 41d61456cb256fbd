// `pnpm notify …`: the operator's command line. Each group of commands is served by the CLI of the
// process whose data it reads (API keys and environments: the gateway; dead letters and sends: the
// worker; every schema's migrations: the migrate command), so none of them is copied here.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const gateway = fileURLToPath(new URL("../services/gateway/dist/cli.js", import.meta.url));
const worker = fileURLToPath(new URL("../services/worker/dist/cli.js", import.meta.url));
const migrate = fileURLToPath(new URL("../packages/migrate/dist/migrate.js", import.meta.url));
const WORKER_GROUPS = new Set(["dead-letters", "unknown-sends"]);

const args = process.argv.slice(2);
const run = (cli, cliArgs) => spawnSync(process.execPath, [cli, ...cliArgs], { stdio: "inherit" }).status ?? 1;

if (args.length === 0 || args[0] === "--help" || args[0] === "-h" || args[0] === "help") {
  const status = run(gateway, ["--help"]) || run(worker, ["--help"]) || run(migrate, ["--help"]);
  process.exit(args.length === 0 ? 1 : status);
}
if (args[0] === "migrate") process.exit(run(migrate, args.slice(1)));
process.exit(run(WORKER_GROUPS.has(args[0]) ? worker : gateway, args));
