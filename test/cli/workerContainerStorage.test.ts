import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { type RemoteWorkerOptions, startRemoteWorker, WorkerConfigError } from "../../src/cli/worker.js";

const start = (containerStorage: string | undefined, env: NodeJS.ProcessEnv = {}) =>
  startRemoteWorker(
    {
      // Nothing listens here: were the coordinator asked first, this would retry forever.
      coordinatorUrl: "http://127.0.0.1:9",
      databaseUrl: undefined,
      concurrency: 1,
      id: undefined,
      modelIdleTimeoutMs: 60_000,
      modelRetryBaseMs: 10,
      workspaceDir: "/nonexistent",
      containerStorage,
      env: { AWAKEN_WORKER_TOKEN: "worker-storage-token-0123456789", ...env },
    } satisfies RemoteWorkerOptions,
    pino({ level: "silent" }),
    () => false,
  );

describe("awaken worker --container-storage", () => {
  it("an unusable store is a start-up error naming where it came from, before the coordinator is asked", async () => {
    const relative = start("images");
    await expect(relative).rejects.toBeInstanceOf(WorkerConfigError);
    await expect(relative).rejects.toThrow(/--container-storage must be an absolute path/);
    const fromEnv = start(undefined, { AWAKEN_CONTAINER_STORAGE: "/" });
    await expect(fromEnv).rejects.toBeInstanceOf(WorkerConfigError);
    await expect(fromEnv).rejects.toThrow(/AWAKEN_CONTAINER_STORAGE must be a directory of its own/);
  });
});
