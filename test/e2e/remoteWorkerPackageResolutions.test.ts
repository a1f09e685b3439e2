/**
 * A remote worker reaches an environment revision's frozen package resolution over the worker
 * transport (`/v1/awaken/worker/package-resolution`), never the database: against a real
 * coordinator with no worker of its own, the test holds the claim a remote worker would. The first
 * record wins and every later reader and recorder gets it; a stale claim or a revision the session
 * does not pin is refused (`claim_lost`) with nothing read or written; a resolution whose content
 * does not match its id is refused. On SQLite and on PostgreSQL.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Activation } from "../../src/coordinator/ports.js";
import { type PackageResolution, packageResolution } from "../../src/kernel/packageResolution.js";
import type { PackageResolutionRequest } from "../../src/runtime/ports.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import {
  PackageResolutionClaimLost,
  RemotePackageResolutions,
} from "../../src/worker/remotePackageResolutions.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, userMessage } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const TOKEN = "worker-token-remote-package-resolutions";
const silent = { info: () => {}, warn: () => {} };

let testServer: TestServer;
let client: Anthropic;
let transport: HttpWorkerTransport;
let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;

async function startCoordinator(backend: "sqlite" | "postgres"): Promise<void> {
  schema = backend === "postgres" ? await emptySchema() : undefined;
  testServer = await startTestServer({
    workers: 0,
    leaseMs: 15_000,
    workerToken: TOKEN,
    ...(schema ? { databaseUrl: schema.url } : {}),
  });
  ({ client } = testServer);
  transport = new HttpWorkerTransport({
    baseUrl: testServer.server.url,
    token: TOKEN,
    log: silent,
    claimWaitMs: 0,
  });
}
afterEach(async () => {
  transport?.close();
  await testServer?.close();
  await schema?.drop();
  schema = undefined;
});

function resolution(version: string): PackageResolution {
  return packageResolution({
    format: 1,
    npm: {
      lockfile: {
        lockfileVersion: 3,
        packages: {
          "": { dependencies: { left: "^1" } },
          "node_modules/left": {
            version,
            resolved: `http://registry.test/left/-/left-${version}.tgz`,
            integrity: "sha512-AAAA",
          },
        },
      },
    },
    pip: null,
    unfrozen: [],
  });
}

/** A session of an environment (no packages: creation prepares nothing here), its run claimed. */
async function claimedRun(): Promise<Activation> {
  const environment = await client.beta.environments.create({ name: "frozen", config: { type: "cloud" } });
  const agent = await client.beta.agents.create({ name: "frozen", model: MODEL });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
  const activation = await transport.claim("remote/0", 0);
  if (!activation) throw new Error("no run to claim");
  return activation;
}

const requestOf = (a: Activation): PackageResolutionRequest => ({
  workspaceId: a.workspaceId,
  sessionId: a.sessionId,
  runId: a.runId,
  owner: a.owner,
  epoch: a.epoch,
  environmentId: a.environment.id,
  revision: a.environment.revision,
});

describe.each(["sqlite", "postgres"] as const)(
  "frozen resolutions over the worker transport (%s)",
  (backend) => {
    beforeEach(async (ctx) => {
      if (backend === "postgres") {
        const reason = postgresUnavailable();
        if (reason) ctx.skip(reason);
      }
      await startCoordinator(backend);
    });

    it("records first-writer-wins under the run's claim; refuses stale claims, other revisions and forged ids", async () => {
      const run = await claimedRun();
      const remote = new RemotePackageResolutions(transport);
      const request = requestOf(run);
      expect(await remote.recorded(request)).toBeNull();

      // Nothing is reachable without a live claim on that session's pinned revision.
      await expect(remote.record({ ...request, epoch: run.epoch + 1 }, resolution("1.0.0"))).rejects.toThrow(
        PackageResolutionClaimLost,
      );
      await expect(
        remote.record({ ...request, revision: request.revision + 1 }, resolution("1.0.0")),
      ).rejects.toThrow(/does not pin that environment revision/);
      // A stale claim aborted the run through the transport: claim it again (a new epoch).
      const again = (await transport.claim("remote/1", 0)) ?? run;
      const live = requestOf(again);
      expect(await remote.recorded(live)).toBeNull();

      const forged = { ...resolution("1.0.0"), id: resolution("1.1.0").id };
      await expect(remote.record(live, forged)).rejects.toThrow(/does not match its content/);

      const first = resolution("1.0.0");
      expect(await remote.record(live, first)).toEqual(first);
      expect(await remote.record(live, resolution("1.1.0"))).toEqual(first);
      expect(await remote.recorded(live)).toEqual(first);
    });
  },
);
