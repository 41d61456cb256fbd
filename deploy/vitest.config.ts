import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Building the image's tree installs, compiles and prunes the whole workspace once.
    testTimeout: 60_000,
    hookTimeout: 15 * 60_000,
  },
});
