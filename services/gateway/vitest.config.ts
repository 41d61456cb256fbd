import { configDefaults, defineConfig } from "vitest/config";

/**
 * Tests that compare the time of one run with another's (a slow provider beside other sends):
 * a neighbouring test file's load during only one of the two would decide the outcome, so they
 * run after the others, one file at a time.
 */
const TIME_COMPARISONS = ["test/delivery-isolation.e2e.test.ts", "test/delivery-providers-isolation.e2e.test.ts"];

/**
 * Tests that read process-wide state as a whole (the metrics registry's counts, a private NATS
 * server's port), which the test files before them in the same process would have left behind.
 */
const FRESH_PROCESS = ["test/metrics.e2e.test.ts", "test/readiness.e2e.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "gateway",
          exclude: [...configDefaults.exclude, ...TIME_COMPARISONS, ...FRESH_PROCESS],
          // Test files share one Postgres, Redis and NATS; each file gets its own database.
          fileParallelism: true,
          maxWorkers: 2,
          // The files of a worker share its loaded modules: each starts and stops a stack of its
          // own, and loading the services, SDKs and clients again for every file took longer
          // than most files' tests.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "fresh process", include: FRESH_PROCESS, fileParallelism: true, maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: { name: "time comparisons", include: TIME_COMPARISONS, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
