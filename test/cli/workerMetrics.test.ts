import { createServer, type Server } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRemoteWorker, WorkerConfigError } from "../../src/cli/worker.js";

describe("awaken worker --metrics-port", () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen({ host: "127.0.0.1", port: 0 }, resolve));
    port = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it("a port already in use is a start-up error naming the flag, before the coordinator is asked", async () => {
    const started = startRemoteWorker(
      {
        // Nothing listens here: were the coordinator asked first, this would retry forever.
        coordinatorUrl: "http://127.0.0.1:9",
        databaseUrl: undefined,
        concurrency: 1,
        id: undefined,
        modelIdleTimeoutMs: 60_000,
        modelRetryBaseMs: 10,
        workspaceDir: "/nonexistent",
        env: { AWAKEN_WORKER_TOKEN: "worker-metrics-token-0123456789" },
        metrics: { host: "127.0.0.1", port },
      },
      pino({ level: "silent" }),
      () => false,
    );
    await expect(started).rejects.toBeInstanceOf(WorkerConfigError);
    await expect(started).rejects.toThrow(
      /--metrics-port: 127\.0\.0\.1:\d+ is already in use.*--metrics-port/,
    );
  });
});
