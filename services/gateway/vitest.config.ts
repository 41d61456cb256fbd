import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Test files share one Postgres, Redis and NATS; each file gets its own database.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
