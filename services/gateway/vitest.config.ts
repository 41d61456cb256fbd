import { configDefaults, defineConfig } from "vitest/config";

/**
 * Tests that compare the time of one run with another's (a slow provider beside other sends):
 * a neighbouring test file's load during only one of the two would decide the outcome, so they
 * run after the others, one file at a time.
 */
const TIME_COMPARISONS = ["test/delivery-isolation.e2e.test.ts", "test/delivery-providers-isolation.e2e.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "gateway",
          exclude: [...configDefaults.exclude, ...TIME_COMPARISONS],
          // Test files share one Postgres, Redis and NATS; each file gets its own database.
          fileParallelism: true,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "time comparisons", include: TIME_COMPARISONS, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
