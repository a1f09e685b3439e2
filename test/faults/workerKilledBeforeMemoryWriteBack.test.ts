/**
 * Fault: kill -9 a worker after its command wrote into a mounted read-write memory store but
 * before the call's commit point. The write-back happens only at that commit point, under the
 * claim: the killed run wrote nothing back, and the next worker's run finds the directory as the
 * store holds it (refreshed from a new snapshot), so nothing of the dead run's changes is saved
 * later either. Real child processes, the real bwrap tier, PostgreSQL.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FaultCluster, startFaultCluster, until } from "../support/faultCluster.js";
import { sessionFacts } from "../support/historyInvariants.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, userMessage } from "../support/sdkHelpers.js";

let cluster: FaultCluster | undefined;
let workspaces: string;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  cluster = await startFaultCluster({ leaseMs: 1000 });
  workspaces = mkdtempSync(join(tmpdir(), "awaken-fault-mem-"));
});
afterEach(async () => {
  await cluster?.dispose();
  cluster = undefined;
  rmSync(workspaces, { recursive: true, force: true });
});

const workerArgs = () => ["--concurrency", "1", "--workspace-dir", workspaces];
const isEndTurn = (f: { type: string; body: Record<string, unknown> }) =>
  f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";

describe("fault: a worker killed before its memory write-back", () => {
  it("writes nothing back; the next run sees the store's content, not the dead run's", async () => {
    const c = cluster!;
    const replica = await c.startReplica();
    const first = await c.startWorker(replica.url, {}, workerArgs());
    const client = replica.client;
    const store = await client.beta.memoryStores.create({ name: "prefs" });
    await client.beta.memoryStores.memories.create(store.id, { path: "/a.md", content: "first" });
    const agent = await client.beta.agents.create({
      name: "remembers",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }],
    });
    const environment = await client.beta.environments.create({
      name: "mem",
      config: { type: "cloud", sandbox: { tier: "bwrap", provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      resources: [{ type: "memory_store", memory_store_id: store.id }],
    });
    const hostDir = join(workspaces, ".mounts", session.id, "memory", store.id);
    await client.beta.sessions.events.send(session.id, {
      events: [
        userMessage(
          'call bash {"command":"echo -n dead > /mnt/memory/prefs/a.md; echo -n new > /mnt/memory/prefs/b.md; sleep 5"}',
        ),
      ],
    });
    await until("the command's writes in the mounted directory", () => existsSync(join(hostDir, "b.md")));
    first.child.kill("SIGKILL");

    const versions = async () => {
      const all = [];
      for await (const v of client.beta.memoryStores.memoryVersions.list(store.id)) all.push(v);
      return all;
    };
    expect(await versions()).toHaveLength(1);

    await c.startWorker(replica.url, {}, workerArgs());
    const facts = await until(
      "the second worker's end_turn",
      async () => {
        const f = await sessionFacts(c.databaseUrl, session.id);
        return f.some(isEndTurn) ? f : undefined;
      },
      30_000,
    );
    // Only the memory the API created: the dead run's changes were never written back.
    expect(await versions()).toHaveLength(1);
    expect(facts.filter((f) => f.type === "awaken.memory_written_back")).toEqual([]);
    // The new run's directory is the store's: a.md as stored, no b.md.
    expect(readFileSync(join(hostDir, "a.md"), "utf8")).toBe("first");
    expect(existsSync(join(hostDir, "b.md"))).toBe(false);
    // Each run recorded what it realized.
    expect(facts.filter((f) => f.type === "awaken.resources_realized").length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
