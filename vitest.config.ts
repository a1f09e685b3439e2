import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/support/sequencer.js";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The suite mostly waits (processes starting, leases lapsing, servers answering): with a worker
    // per core the cores sat half idle. One more file than cores keeps them busy; two per core (with
    // another run on the machine) starved a short-lease fault test long enough for its lease to lapse.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LongestFirstSequencer },
    // Fails the run when a test leaves a process, a scratch dir or a PostgreSQL cluster behind.
    globalSetup: ["test/support/leakCheck.ts"],
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", "json"],
    outputFile: { json: "test-results/vitest.json" },
    // `include` is per project: a project's list would add to an inherited one, not replace it.
    projects: [
      { extends: true, test: { name: "suite", include: ["test/**/*.test.ts"] } },
      // The fault suite again on the split deployment, in the same run so its waits overlap the rest
      // (`npm run test:faults:split` runs it alone).
      {
        extends: true,
        test: {
          name: "faults-split",
          include: ["test/faults/**/*.test.ts"],
          env: { AWAKEN_FAULT_TOPOLOGY: "split" },
        },
      },
    ],
  },
});
