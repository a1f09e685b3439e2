/**
 * Fault: kill -9 the worker running a dream while its model call is in flight. A dream has no
 * executor of its own: its run is its session's run, so the normal recovery resumes it (the lease
 * lapses, another worker claims the run at the next epoch and asks the model again, nothing of the
 * cut-off request having been committed). The dream completes with exactly one output store.
 *
 * One `awaken up --workers 0` replica on a fresh PostgreSQL schema, real `awaken worker` processes
 * and a fake Anthropic server in this process ("in flight" is the fake having the request).
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { until, useFaultCluster } from "../support/faultCluster.js";
import { checkHistoryInvariants } from "../support/historyInvariants.js";
import { all, MODEL } from "../support/sdkHelpers.js";

const faultCluster = useFaultCluster({ leaseMs: 600 });

let fake: FakeModelServer;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake.close();
});

const ANSWER = { memories: [{ path: "/merged/notes.md", content: "alpha and beta" }] };

describe("fault: a worker killed while it runs a dream", () => {
  it("the dream's run resumes on another worker and completes with exactly one output store", async () => {
    const c = faultCluster();
    const replica = await c.startReplica();
    const client = replica.client;
    const store = await client.beta.memoryStores.create({ name: "Notes" });
    await client.beta.memoryStores.memories.create(store.id, { path: "/a.md", content: "alpha" });
    await client.beta.memoryStores.memories.create(store.id, { path: "/b.md", content: "beta" });
    const agent = await client.beta.agents.create({ name: "Past", model: MODEL });
    const environment = await client.beta.environments.create({ name: "past" });
    const past = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });

    const modelEnv = { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url };
    fake.setFallback({ kind: "hang" });
    const first = await c.startWorker(replica.url, modelEnv, ["--concurrency", "1", "--id", "doomed"]);
    const dream = await client.beta.dreams.create({
      inputs: [
        { type: "memory_store", memory_store_id: store.id },
        { type: "sessions", session_ids: [past.id] },
      ],
      model: MODEL,
    });
    // The dreamer's request is with the model: kill the worker holding it.
    await fake.waitForRequests(1, 20_000);
    expect((await client.beta.dreams.retrieve(dream.id)).status).toBe("running");
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");

    fake.setFallback({ kind: "text", text: JSON.stringify(ANSWER) });
    const storesBefore = (await all(client.beta.memoryStores.list({ include_archived: true }))).map(
      (s) => s.id,
    );
    await c.startWorker(replica.url, modelEnv, ["--concurrency", "1", "--id", "finisher"]);
    const done = await until(
      "the dream ended",
      async () => {
        const current = await client.beta.dreams.retrieve(dream.id);
        return ["completed", "failed", "canceled"].includes(current.status) ? current : null;
      },
      30_000,
      50,
    );
    expect(done).toMatchObject({ status: "completed", error: null });
    expect(done.outputs).toHaveLength(1);
    const outputId = done.outputs[0]!.memory_store_id;

    // Exactly one new store, holding exactly the dreamer's answer.
    const storesAfter = (await all(client.beta.memoryStores.list({ include_archived: true }))).map(
      (s) => s.id,
    );
    expect(storesAfter.filter((id) => !storesBefore.includes(id))).toEqual([outputId]);
    const memories = await all(client.beta.memoryStores.memories.list(outputId, { view: "full" }));
    expect(memories.map((m) => [m.path, (m as { content: string }).content])).toEqual([
      ["/merged/notes.md", "alpha and beta"],
    ]);
    // The model was asked twice (once per claim); the run was claimed again at the next epoch.
    expect(fake.requests).toHaveLength(2);
    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ state: string; epoch: string }>(
        "select state, epoch from runs where session_id = $1",
        [done.session_id],
      );
      expect(rows.map((r) => ({ state: r.state, epoch: Number(r.epoch) }))).toEqual([
        { state: "done", epoch: 2 },
      ]);
      const outputs = await db.query("select id from memory_stores where metadata_json like $1", [
        `%${dream.id}%`,
      ]);
      expect(outputs.rows).toHaveLength(1);
    } finally {
      await db.end();
    }
    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
    // Room for four processes' start-ups (Control and a coordinator on the split topology) under CI's load.
  }, 90_000);
});
