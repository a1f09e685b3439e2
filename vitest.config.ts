import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Child-process and server tests share two cores; keep parallelism modest so timing-sensitive
    // lease tests are not starved.
    maxWorkers: 2,
    // Fails the run when a test leaves a process, a scratch dir or a PostgreSQL cluster behind.
    globalSetup: ["test/support/leakCheck.ts"],
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", "json"],
    outputFile: { json: "test-results/vitest.json" },
  },
});
