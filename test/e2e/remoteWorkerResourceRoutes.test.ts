/**
 * The remote worker's `RunResources` over the worker transport (`/v1/awaken/worker/resources/...`),
 * against a real coordinator in this process that has no worker of its own: the test holds the
 * claims a remote worker would. Every route answers the claimed session's resources and nothing
 * else, and refuses (`claim_lost`, having read nothing) a stale epoch, another owner, and a claim
 * that names one session with another session's run; a refusal also aborts that run through the
 * transport's cancel listeners. A blob no resource of the claimed session references is `none`,
 * even when another session mounts it. The repository token crosses once, as bytes. On SQLite
 * and on PostgreSQL.
 */

import type Anthropic from "@anthropic-ai/sdk";
import { toFile } from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Activation } from "../../src/coordinator/ports.js";
import { type ResourceClaim, ResourceClaimLostError, type RunResource } from "../../src/resources/ports.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import { RemoteResources } from "../../src/worker/remoteResources.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, userMessage } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";

const TOKEN = "worker-token-remote-resources-routes";
const silent = { info: () => {}, warn: () => {} };

let testServer: TestServer;
let client: Anthropic;
let transport: HttpWorkerTransport;
let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;

/** The coordinator on `backend`, with no worker of its own; the test holds the claims. */
async function startCoordinator(backend: "sqlite" | "postgres"): Promise<void> {
  schema = backend === "postgres" ? await emptySchema() : undefined;
  testServer = await startTestServer({
    workers: 0,
    leaseMs: 15_000,
    workerToken: TOKEN,
    // The repositories' URLs name the loopback (never cloned here): the operator allow-lists it.
    allowPrivateHosts: LOOPBACK,
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

const claimOf = (a: Activation): ResourceClaim => ({
  workspaceId: a.workspaceId,
  sessionId: a.sessionId,
  runId: a.runId,
  owner: a.owner,
  epoch: a.epoch,
});

/** A session mounting one uploaded file, one memory store and a private repository; its run queued. */
async function sessionWithResources(label: string, repositoryToken: string) {
  // Mounted resources need the sandbox before the first tool call: eager provisioning.
  const environment = await client.beta.environments.create({
    name: `env-${label}`,
    config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
  });
  const agent = await client.beta.agents.create({ name: `agent-${label}`, model: MODEL } as never);
  const file = await client.beta.files.upload({
    file: await toFile(Buffer.from(`contents of ${label}\n`), `${label}.txt`, { type: "text/plain" }),
  });
  const store = await client.beta.memoryStores.create({ name: `store-${label}` });
  await client.beta.memoryStores.memories.create(store.id, {
    path: "/notes/first.md",
    content: `first ${label}`,
  });
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    resources: [
      { type: "file", file_id: file.id },
      { type: "memory_store", memory_store_id: store.id },
      {
        type: "github_repository",
        url: `http://127.0.0.1:9/${label}/repo.git`,
        authorization_token: repositoryToken,
      },
    ],
  });
  await client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
  return { session, file, store };
}

async function claimNext(owner: string): Promise<Activation> {
  const activation = await transport.claim(owner, 0);
  if (!activation) throw new Error("no run to claim");
  return activation;
}

describe.each(["sqlite", "postgres"] as const)(
  "RemoteResources over the worker transport (%s)",
  (backend) => {
    beforeEach(async (ctx) => {
      if (backend === "postgres") {
        const reason = postgresUnavailable();
        if (reason) ctx.skip(reason);
      }
      await startCoordinator(backend);
    });

    it("answers the claimed session's resources and nothing of another session's", async () => {
      const a = await sessionWithResources("alpha", "ghp_alpha_secret_token_0001");
      const b = await sessionWithResources("beta", "ghp_beta_secret_token_0002");
      const first = await claimNext("unit/0");
      const second = await claimNext("unit/1");
      const runA = first.sessionId === a.session.id ? first : second;
      const runB = first.sessionId === a.session.id ? second : first;
      const remote = new RemoteResources(transport);
      const claimA = claimOf(runA);

      const { resources, skills } = await remote.resolve(claimA);
      expect(skills).toEqual([]);
      const file = resources.find((r): r is Extract<RunResource, { type: "file" }> => r.type === "file");
      const repository = resources.find(
        (r): r is Extract<RunResource, { type: "github_repository" }> => r.type === "github_repository",
      );
      expect(file).toMatchObject({ fileId: a.file.id, filename: "alpha.txt" });
      expect(resources).toContainEqual(
        expect.objectContaining({ type: "memory_store", memoryStoreId: a.store.id, access: "read_write" }),
      );
      expect(repository).toMatchObject({ url: "http://127.0.0.1:9/alpha/repo.git", hasToken: true });
      expect(JSON.stringify(resources)).not.toContain("ghp_alpha");
      if (!file || !repository) throw new Error("resources missing");

      expect((await remote.readBlob(claimA, file.digest))?.toString("utf8")).toBe("contents of alpha\n");
      // Session beta's file is stored, but session alpha's claim does not reference it.
      const { resources: resourcesB } = await remote.resolve(claimOf(runB));
      const fileB = resourcesB.find((r) => r.type === "file");
      if (fileB?.type !== "file") throw new Error("beta's file missing");
      expect(await remote.readBlob(claimOf(runB), fileB.digest)).not.toBeNull();
      expect(await remote.readBlob(claimA, fileB.digest)).toBeNull();
      expect(await remote.readBlob(claimA, `sha256:${"0".repeat(64)}`)).toBeNull();

      const snapshot = await remote.memorySnapshot(claimA, a.store.id);
      expect(snapshot).toEqual([expect.objectContaining({ path: "notes/first.md", content: "first alpha" })]);
      const outcomes = await remote.writeMemory(claimA, a.store.id, [
        { kind: "create", path: "notes/second.md", content: "written remotely" },
      ]);
      expect(outcomes).toEqual([expect.objectContaining({ path: "notes/second.md", outcome: "written" })]);
      const memories = [];
      for await (const item of client.beta.memoryStores.memories.list(a.store.id)) memories.push(item);
      expect(memories.map((m) => (m as { path: string }).path).sort()).toEqual([
        "/notes/first.md",
        "/notes/second.md",
      ]);
      // Another session's store is not this claim's to read or write.
      // Answered as absent (a 404 naming the store), never a server error.
      await expect(remote.memorySnapshot(claimA, b.store.id)).rejects.toThrow(
        /404.*does not mount the memory store/,
      );
      await expect(
        remote.writeMemory(claimA, b.store.id, [{ kind: "create", path: "x.md", content: "x" }]),
      ).rejects.toThrow(/404.*does not mount the memory store/);

      const token = await remote.repositoryToken(claimA, repository.id);
      expect(token?.toString("utf8")).toBe("ghp_alpha_secret_token_0001");
      token?.fill(0);
    });

    it("refuses every route for a stale epoch, another owner, and another session's run, aborting the run", async () => {
      const a = await sessionWithResources("gamma", "ghp_gamma_secret_token_0003");
      await sessionWithResources("delta", "ghp_delta_secret_token_0004");
      const first = await claimNext("unit/0");
      const second = await claimNext("unit/1");
      const runA = first.sessionId === a.session.id ? first : second;
      const runB = first.sessionId === a.session.id ? second : first;
      const remote = new RemoteResources(transport);
      const live = claimOf(runA);
      const { resources } = await remote.resolve(live);
      const file = resources.find((r) => r.type === "file");
      const repository = resources.find((r) => r.type === "github_repository");
      if (file?.type !== "file" || repository?.type !== "github_repository")
        throw new Error("resources missing");
      const cancelled: string[] = [];
      transport.onRunCancelled((runId) => cancelled.push(runId));

      const calls: Array<[string, (claim: ResourceClaim) => Promise<unknown>]> = [
        ["resolve", (claim) => remote.resolve(claim)],
        ["readBlob", (claim) => remote.readBlob(claim, file.digest)],
        ["memorySnapshot", (claim) => remote.memorySnapshot(claim, a.store.id)],
        [
          "writeMemory",
          (claim) =>
            remote.writeMemory(claim, a.store.id, [{ kind: "create", path: "stale.md", content: "no" }]),
        ],
        ["repositoryToken", (claim) => remote.repositoryToken(claim, repository.id)],
      ];
      const stale: Array<[string, ResourceClaim]> = [
        ["a stale epoch", { ...live, epoch: live.epoch + 1 }],
        ["an older epoch", { ...live, epoch: Math.max(0, live.epoch - 1) }],
        ["another owner", { ...live, owner: "unit/9" }],
        // Session gamma's ids with session delta's live run: the run is not a run of gamma.
        ["another session's run", { ...live, runId: runB.runId, owner: runB.owner, epoch: runB.epoch }],
      ];
      for (const [route, call] of calls) {
        for (const [what, claim] of stale) {
          if (what === "an older epoch" && live.epoch === 0) continue;
          const refused = call(claim);
          await expect(refused, `${route} with ${what}`).rejects.toBeInstanceOf(ResourceClaimLostError);
          await expect(refused).rejects.not.toThrow(/ghp_/);
        }
      }
      expect(cancelled.length).toBeGreaterThan(0);
      expect(new Set(cancelled)).toEqual(new Set([live.runId, runB.runId]));
      // Nothing was written by the refused write-backs.
      const memories = [];
      for await (const item of client.beta.memoryStores.memories.list(a.store.id)) memories.push(item);
      expect(memories.map((m) => (m as { path: string }).path)).toEqual(["/notes/first.md"]);
    });

    it("needs the worker token, and answers nothing to a malformed request", async () => {
      const response = await fetch(`${testServer.server.url}/v1/awaken/worker/resources/repository-token`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer not-the-worker-token" },
        body: JSON.stringify({
          workspaceId: "w",
          sessionId: "s",
          runId: "r",
          owner: "o",
          epoch: 1,
          resourceId: "x",
        }),
      });
      expect(response.status).toBe(401);
      const malformed = await fetch(`${testServer.server.url}/v1/awaken/worker/resources/read-blob`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({
          workspaceId: "w",
          sessionId: "s",
          runId: "r",
          owner: "o",
          epoch: 1,
          digest: "../x",
        }),
      });
      expect(malformed.status).toBe(400);
    });
  },
);
