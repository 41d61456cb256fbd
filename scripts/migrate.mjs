// Applies every service's migrations (what the Kubernetes migrate Job runs).
import { createPool, ensureDatabase, migrate } from "@notify/runtime";
import { entryOf, gateway, services } from "./services.mjs";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/notify";
await ensureDatabase(url);
const pool = createPool(url, 1);
try {
  for (const { name } of [gateway, ...services]) {
    const { migrations } = await import(entryOf(name).href);
    const applied = await migrate(pool, migrations);
    console.log(`${name}: ${applied.length ? applied.join(", ") : "up to date"}`);
  }
} finally {
  await pool.end();
}
