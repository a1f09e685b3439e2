/**
 * Dreams through the official SDK over real HTTP, on SQLite and on PostgreSQL: a dream runs as an
 * internal session on the workspace's dreamer agent and completes with a new memory store (the
 * offline model's deterministic rule: the source memories merged and sorted, one memory per
 * session's transcript); a dream canceled while its model call is in flight ends canceled with no
 * output store; a model failure and an unusable answer fail it with a secret-free error; archive
 * hides ended dreams; bad inputs are refused with a 4xx and nothing written.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { BetaDream } from "@anthropic-ai/sdk/resources/beta/dreams";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  all,
  BAD_REQUEST,
  expectApiError,
  isEndTurnIdle,
  MODEL,
  NOT_FOUND,
  RFC3339,
  userMessage,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

/** Answered by the offline model (no provider serves `offline-*` ids). */
const OFFLINE = "offline-dreamer";
const FINAL = ["completed", "failed", "canceled"];
const BACKENDS = ["SQLite", "PostgreSQL"] as const;

describe.each(BACKENDS)("dreams over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let fake: FakeModelServer;
  let client: Anthropic;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    fake = await startFakeAnthropic();
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer({
      // claude-* models are the fake Anthropic server's; offline-* ids the offline model's.
      env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url },
      ...(schema ? { databaseUrl: schema.url } : {}),
    });
    client = t.client;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
    await fake?.close();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  async function sourceStore(memories: Array<[string, string]>) {
    const store = await client.beta.memoryStores.create({ name: "Team notes" });
    for (const [path, content] of memories) {
      await client.beta.memoryStores.memories.create(store.id, { path, content });
    }
    return store;
  }

  /** A past session with one finished turn on the offline model. */
  async function pastSession(text: string) {
    const agent = await client.beta.agents.create({ name: "Helper", model: "offline-helper" });
    const environment = await client.beta.environments.create({ name: `past-${Date.now()}` });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, { events: [userMessage(text)] });
    await waitForHistory(client, session.id, (events) => events.some(isEndTurnIdle));
    return session;
  }

  async function settled(id: string, done = (d: BetaDream) => FINAL.includes(d.status)): Promise<BetaDream> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const dream = await client.beta.dreams.retrieve(id);
      if (done(dream)) return dream;
      if (Date.now() > deadline) throw new Error(`dream ${id} stayed ${dream.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const storeIds = async () =>
    (await all(client.beta.memoryStores.list({ include_archived: true }))).map((s) => s.id);

  it("completes with a new memory store holding the dreamer's reorganized memories; the source is unchanged", async () => {
    const store = await sourceStore([
      ["/people/bob.md", "Bob prefers email."],
      ["/people/alice.md", "Alice likes tea."],
      ["/dup/alice.md", "Alice likes tea."],
    ]);
    const second = await pastSession("remember that the deploy is on Fridays");
    const first = await pastSession("remember that Carol joined the team");
    const created = await client.beta.dreams.create({
      inputs: [
        { type: "memory_store", memory_store_id: store.id },
        { type: "sessions", session_ids: [second.id, first.id] },
      ],
      model: OFFLINE,
      instructions: "Keep it short.",
    });
    expect(created).toMatchObject({
      type: "dream",
      status: "pending",
      outputs: [],
      error: null,
      ended_at: null,
      archived_at: null,
      instructions: "Keep it short.",
      model: { id: OFFLINE, speed: "standard" },
      output_behavior: { type: "create_new" },
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
    expect(created.id).toMatch(/^drm_/);
    expect(created.created_at).toMatch(RFC3339);
    expect(created.session_id).toMatch(/^sesn_/);
    // Responses list the session ids sorted.
    expect(created.inputs).toEqual([
      { type: "memory_store", memory_store_id: store.id },
      { type: "sessions", session_ids: [second.id, first.id].sort() },
    ]);

    const dream = await settled(created.id);
    expect(dream.status).toBe("completed");
    expect(dream.error).toBeNull();
    expect(dream.ended_at).toMatch(RFC3339);
    expect(dream.usage.input_tokens).toBeGreaterThan(0);
    expect(dream.usage.output_tokens).toBeGreaterThan(0);
    expect(dream.outputs).toHaveLength(1);
    const output = dream.outputs[0]!;
    expect(output.type).toBe("memory_store");
    expect(output.memory_store_id).not.toBe(store.id);

    const outputStore = await client.beta.memoryStores.retrieve(output.memory_store_id);
    expect(outputStore).toMatchObject({ name: "Team notes (dreamed)", archived_at: null });
    const memories = await all(
      client.beta.memoryStores.memories.list(output.memory_store_id, { view: "full" }),
    );
    const written = memories.map((m) => ({ path: m.path, content: (m as { content: string }).content }));
    const [a, b] = [first.id, second.id].sort();
    // The offline rule: identical memories merged into the smallest path, all sorted by path.
    expect(written).toEqual([
      { path: "/dup/alice.md", content: "Alice likes tea." },
      { path: "/people/bob.md", content: "Bob prefers email." },
      { path: `/sessions/${a}.md`, content: expect.stringContaining("user: remember that") },
      { path: `/sessions/${b}.md`, content: expect.stringContaining("user: remember that") },
    ]);
    expect(written.find((m) => m.path === `/sessions/${first.id}.md`)?.content).toBe(
      "user: remember that Carol joined the team\nagent: [offline model] You said: remember that Carol joined the team",
    );
    // The source store is as it was.
    const source = await all(client.beta.memoryStores.memories.list(store.id));
    expect(source.map((m) => m.path).sort()).toEqual(["/dup/alice.md", "/people/alice.md", "/people/bob.md"]);

    // The dream's session is an ordinary session: its events show the dreamer's turn.
    const events = await waitForHistory(client, dream.session_id!, (e) => e.some(isEndTurnIdle));
    expect(events.some((e) => e.type === "agent.message")).toBe(true);
    // Reading again changes nothing: still one output store.
    expect(await client.beta.dreams.retrieve(dream.id)).toEqual(dream);

    // Listing, filters and archive.
    const listed = await all(client.beta.dreams.list());
    expect(listed.map((d) => d.id)).toContain(dream.id);
    expect(
      (await all(client.beta.dreams.list({ statuses: ["failed", "canceled"] }))).map((d) => d.id),
    ).not.toContain(dream.id);
    const after = new Date(Date.parse(dream.created_at) + 1).toISOString();
    expect((await all(client.beta.dreams.list({ "created_at[gt]": after }))).map((d) => d.id)).not.toContain(
      dream.id,
    );
    expect((await all(client.beta.dreams.list({ "created_at[lt]": after }))).map((d) => d.id)).toContain(
      dream.id,
    );
    const archived = await client.beta.dreams.archive(dream.id);
    expect(archived.archived_at).toMatch(RFC3339);
    expect({ ...archived, archived_at: null }).toEqual(dream);
    expect(await client.beta.dreams.archive(dream.id)).toEqual(archived);
    expect(await client.beta.dreams.retrieve(dream.id)).toEqual(archived);
    expect((await all(client.beta.dreams.list())).map((d) => d.id)).not.toContain(dream.id);
    expect((await all(client.beta.dreams.list({ include_archived: true }))).map((d) => d.id)).toContain(
      dream.id,
    );
    // A completed dream cannot be canceled.
    await expectApiError(client.beta.dreams.cancel(dream.id), Anthropic.BadRequestError, BAD_REQUEST);
  });

  it("a dream nobody reads still completes: the server brings it up to its session", async () => {
    const store = await sourceStore([["/a.md", "a"]]);
    const session = await pastSession("hello");
    const dream = await client.beta.dreams.create({
      inputs: [
        { type: "memory_store", memory_store_id: store.id },
        { type: "sessions", session_ids: [session.id] },
      ],
      model: OFFLINE,
    });
    // Only memory stores are read until the output store appears (no dream is read meanwhile).
    const deadline = Date.now() + 20_000;
    let output: string | undefined;
    while (output === undefined) {
      const stores = await all(client.beta.memoryStores.list());
      output = stores.find((s) => s.metadata.awaken_dream_id === dream.id)?.id;
      if (output === undefined && Date.now() > deadline) throw new Error("no output store appeared");
      if (output === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const done = await client.beta.dreams.retrieve(dream.id);
    expect(done).toMatchObject({
      status: "completed",
      outputs: [{ type: "memory_store", memory_store_id: output }],
    });
  });

  it("pages newest first", async () => {
    const store = await sourceStore([["/x.md", "x"]]);
    const session = await pastSession("hello");
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const dream = await client.beta.dreams.create({
        inputs: [
          { type: "memory_store", memory_store_id: store.id },
          { type: "sessions", session_ids: [session.id] },
        ],
        model: OFFLINE,
      });
      made.push(dream.id);
      await settled(dream.id);
    }
    const page = await client.beta.dreams.list({ limit: 2 });
    expect(page.data.map((d) => d.id)).toEqual([made[2], made[1]]);
    expect(page.hasNextPage()).toBe(true);
    const next = await page.getNextPage();
    expect(next.data[0]?.id).toBe(made[0]);
  });

  it("canceled while its model call is in flight: canceled, no output store, and it stays so", async () => {
    const store = await sourceStore([["/a.md", "a"]]);
    const session = await pastSession("hello");
    fake.setFallback({ kind: "hang" });
    const asked = fake.requests.length;
    const before = await storeIds();
    const created = await client.beta.dreams.create({
      inputs: [
        { type: "memory_store", memory_store_id: store.id },
        { type: "sessions", session_ids: [session.id] },
      ],
      model: { id: MODEL, speed: "standard" },
    });
    await fake.waitForRequests(asked + 1, 20_000);
    const running = await settled(created.id, (d) => d.status === "running");
    expect(running.outputs).toEqual([]);
    // A running dream cannot be archived.
    await expectApiError(client.beta.dreams.archive(created.id), Anthropic.BadRequestError, BAD_REQUEST);

    const canceled = await client.beta.dreams.cancel(created.id);
    expect(canceled).toMatchObject({ status: "canceled", outputs: [], error: null });
    expect(canceled.ended_at).toMatch(RFC3339);
    // The session's run is interrupted: it goes idle and the model call is abandoned.
    await waitForHistory(client, created.session_id!, (e) => e.some((x) => x.type === "session.status_idle"));
    fake.setFallback((body) => ({ kind: "text", text: `fake: ${JSON.stringify(body).length}` }));
    expect(await client.beta.dreams.cancel(created.id)).toMatchObject({ status: "canceled", outputs: [] });
    expect((await client.beta.dreams.retrieve(created.id)).status).toBe("canceled");
    expect(await storeIds()).toEqual(before);
    expect((await client.beta.dreams.archive(created.id)).archived_at).toMatch(RFC3339);
  });

  it("fails with a clear, secret-free error when the model fails or answers something unusable", async () => {
    const store = await sourceStore([["/a.md", "a"]]);
    const session = await pastSession("hello");
    const before = await storeIds();
    const inputs = [
      { type: "memory_store" as const, memory_store_id: store.id },
      { type: "sessions" as const, session_ids: [session.id] },
    ];

    fake.enqueue({
      kind: "error",
      status: 400,
      errorType: "invalid_request_error",
      message: "provider says sk-ant-secret-123",
    });
    const modelFailed = await settled((await client.beta.dreams.create({ inputs, model: MODEL })).id);
    expect(modelFailed.status).toBe("failed");
    expect(modelFailed.outputs).toEqual([]);
    expect(modelFailed.error?.type).toBe("model_error");
    expect(modelFailed.error?.message).toMatch(/model run failed/);
    expect(JSON.stringify(modelFailed)).not.toContain("sk-ant-secret-123");

    const unusable = await settled(
      (await client.beta.dreams.create({ inputs, model: OFFLINE, instructions: "offline-dream: invalid" }))
        .id,
    );
    expect(unusable).toMatchObject({ status: "failed", outputs: [] });
    expect(unusable.error).toEqual({ type: "invalid_output", message: expect.stringContaining("JSON") });

    fake.enqueue({
      kind: "text",
      text: JSON.stringify({ memories: [{ path: "no-slash.md", content: "x" }] }),
    });
    const badPath = await settled((await client.beta.dreams.create({ inputs, model: MODEL })).id);
    expect(badPath.error).toEqual({
      type: "invalid_output",
      message: expect.stringContaining("must start with /"),
    });

    expect(await storeIds()).toEqual(before);
    await expectApiError(client.beta.dreams.cancel(badPath.id), Anthropic.BadRequestError, BAD_REQUEST);
  });

  it("a scripted model's answer becomes the output store exactly", async () => {
    const store = await sourceStore([["/a.md", "a"]]);
    const session = await pastSession("hello");
    fake.enqueue({
      kind: "text",
      text: `Here it is:\n${JSON.stringify({ memories: [{ path: "/summary/all.md", content: "a and hello" }] })}`,
    });
    const dream = await settled(
      (
        await client.beta.dreams.create({
          inputs: [
            { type: "memory_store", memory_store_id: store.id },
            { type: "sessions", session_ids: [session.id] },
          ],
          model: MODEL,
        })
      ).id,
    );
    expect(dream.status).toBe("completed");
    const memories = await all(
      client.beta.memoryStores.memories.list(dream.outputs[0]!.memory_store_id, { view: "full" }),
    );
    expect(memories.map((m) => [m.path, (m as { content: string }).content])).toEqual([
      ["/summary/all.md", "a and hello"],
    ]);
    // The dreamer was asked with its own system prompt and the request's memories and transcript.
    const asked = fake.requests.at(-1)!.body as { system?: unknown; messages: Array<{ content: unknown }> };
    expect(JSON.stringify(asked.system)).toContain("You are a dreamer");
    expect(JSON.stringify(asked.messages[0]?.content)).toContain("/a.md");
    expect(JSON.stringify(asked.messages[0]?.content)).toContain(session.id);
  });

  it("update_existing writes the result into the input store, one such dream per store at a time", async () => {
    const store = await sourceStore([
      ["/keep.md", "kept"],
      ["/change.md", "before"],
      ["/drop.md", "dropped"],
    ]);
    const kept = (await all(client.beta.memoryStores.memories.list(store.id))).find(
      (m) => m.path === "/keep.md",
    ) as { memory_version_id: string };
    const session = await pastSession("hello");
    const inputs = [
      { type: "memory_store" as const, memory_store_id: store.id },
      { type: "sessions" as const, session_ids: [session.id] },
    ];
    const update = { type: "update_existing" as const, memory_store_id: store.id };
    const before = await storeIds();

    // A first dream holds the store while its model call hangs: a second is a 409, not retried.
    fake.setFallback({ kind: "hang" });
    const asked = fake.requests.length;
    const holder = await client.beta.dreams.create({ inputs, model: MODEL, output_behavior: update });
    expect(holder.output_behavior).toEqual(update);
    await fake.waitForRequests(asked + 1, 20_000);
    const refused = await expectApiError(
      client.beta.dreams.create({ inputs, model: MODEL, output_behavior: update }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: [holder.id] },
    );
    expect(refused.headers?.get("x-should-retry")).toBe("false");
    // A create_new dream of the same store is not held back.
    const other = await client.beta.dreams.create({ inputs, model: OFFLINE });
    expect((await settled(other.id)).status).toBe("completed");
    await client.beta.dreams.cancel(holder.id);

    // Once it ended, the next one takes the store and replaces its memories by path.
    fake.setFallback((body) => ({ kind: "text", text: `fake: ${JSON.stringify(body).length}` }));
    fake.enqueue({
      kind: "text",
      text: JSON.stringify({
        memories: [
          { path: "/keep.md", content: "kept" },
          { path: "/change.md", content: "after" },
          { path: "/new/added.md", content: "added" },
        ],
      }),
    });
    const dream = await settled(
      (await client.beta.dreams.create({ inputs, model: MODEL, output_behavior: update })).id,
    );
    expect(dream).toMatchObject({
      status: "completed",
      output_behavior: update,
      outputs: [{ type: "memory_store", memory_store_id: store.id }],
    });
    const memories = await all(client.beta.memoryStores.memories.list(store.id, { view: "full" }));
    expect(memories.map((m) => [m.path, (m as { content: string }).content]).sort()).toEqual([
      ["/change.md", "after"],
      ["/keep.md", "kept"],
      ["/new/added.md", "added"],
    ]);
    // The unchanged memory kept its version; the others have new ones, the dropped one a deletion.
    expect(
      (memories.find((m) => m.path === "/keep.md") as { memory_version_id?: string }).memory_version_id,
    ).toBe(kept.memory_version_id);
    const versions = await all(client.beta.memoryStores.memoryVersions.list(store.id));
    expect(versions.map((v) => v.operation).sort()).toEqual(
      ["created", "created", "created", "created", "deleted", "modified"].sort(),
    );
    // One output store was made in all: the create_new dream's.
    const made = (await storeIds()).filter((id) => !before.includes(id));
    expect(made).toEqual([(await client.beta.dreams.retrieve(other.id)).outputs[0]!.memory_store_id]);
  });

  it("refuses bad inputs with a 4xx and writes nothing", async () => {
    const store = await sourceStore([["/a.md", "a"]]);
    const session = await pastSession("hello");
    const dreamsBefore = (await all(client.beta.dreams.list({ include_archived: true }))).map((d) => d.id);
    const storesBefore = await storeIds();
    const sessionsBefore = (await all(client.beta.sessions.list({ include_archived: true }))).length;
    const memoryInput = { type: "memory_store" as const, memory_store_id: store.id };
    const sessionsInput = { type: "sessions" as const, session_ids: [session.id] };
    const create = (body: Record<string, unknown>) => client.beta.dreams.create(body as never);

    await expectApiError(
      create({
        inputs: [{ type: "memory_store", memory_store_id: "memstore_nope" }, sessionsInput],
        model: OFFLINE,
      }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      create({ inputs: [memoryInput, { type: "sessions", session_ids: ["sesn_nope"] }], model: OFFLINE }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    const many = Array.from({ length: 101 }, (_, i) => `sesn_${String(i).padStart(3, "0")}`);
    await expectApiError(
      create({ inputs: [memoryInput, { type: "sessions", session_ids: many }], model: OFFLINE }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["at most 100"] },
    );
    const bad: Array<Record<string, unknown>> = [
      { inputs: [memoryInput, { type: "sessions", session_ids: [session.id, session.id] }], model: OFFLINE },
      { inputs: [memoryInput, { type: "sessions", session_ids: [] }], model: OFFLINE },
      { inputs: [memoryInput], model: OFFLINE },
      { inputs: [memoryInput, memoryInput, sessionsInput], model: OFFLINE },
      { inputs: [memoryInput, sessionsInput], model: { id: OFFLINE, speed: "fast" } },
      { inputs: [memoryInput, sessionsInput], model: "" },
      { inputs: [memoryInput, sessionsInput], model: OFFLINE, instructions: "" },
      { inputs: [memoryInput, sessionsInput], model: OFFLINE, instructions: "x".repeat(4097) },
      { inputs: [memoryInput, sessionsInput], model: OFFLINE, output_behavior: { type: "replace" } },
      {
        inputs: [memoryInput, sessionsInput],
        model: OFFLINE,
        // update_existing writes the store the dream reads, and no other.
        output_behavior: { type: "update_existing", memory_store_id: "memstore_other" },
      },
    ];
    for (const body of bad) await expectApiError(create(body), Anthropic.BadRequestError, BAD_REQUEST);
    // Sessions about two data subjects: the dream's session could be erased with only one of them.
    const agent = await client.beta.agents.create({ name: "Subjects", model: OFFLINE });
    const environment = await client.beta.environments.create({ name: "subjects" });
    const about = (subject: string) =>
      client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
        metadata: { awaken_data_subject: subject },
      });
    const [u1, u2] = [await about("user-1"), await about("user-2")];
    await expectApiError(
      create({ inputs: [memoryInput, { type: "sessions", session_ids: [u1.id, u2.id] }], model: OFFLINE }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["different data subjects"] },
    );
    const archivedStore = await sourceStore([]);
    await client.beta.memoryStores.archive(archivedStore.id);
    await expectApiError(
      create({
        inputs: [{ type: "memory_store", memory_store_id: archivedStore.id }, sessionsInput],
        model: OFFLINE,
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["archived"] },
    );
    await expectApiError(client.beta.dreams.retrieve("drm_nope"), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(
      client.beta.dreams.list({ statuses: ["sleeping" as never] }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );

    // Another workspace: my store, my sessions and my dreams are not there.
    const response = await fetch(`${t!.server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ role: "admin", workspace_id: "wrkspc_dreams_other" }),
    });
    expect(response.status).toBe(200);
    const other = new Anthropic({
      apiKey: ((await response.json()) as { key: string }).key,
      baseURL: t!.server.url,
      maxRetries: 0,
    });
    await expectApiError(
      other.beta.dreams.create({ inputs: [memoryInput, sessionsInput], model: OFFLINE }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    const theirStore = await other.beta.memoryStores.create({ name: "theirs" });
    await expectApiError(
      other.beta.dreams.create({
        inputs: [{ type: "memory_store", memory_store_id: theirStore.id }, sessionsInput],
        model: OFFLINE,
      }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    const mine = await client.beta.dreams.create({ inputs: [memoryInput, sessionsInput], model: OFFLINE });
    await settled(mine.id);
    for (const call of [
      () => other.beta.dreams.retrieve(mine.id),
      () => other.beta.dreams.cancel(mine.id),
      () => other.beta.dreams.archive(mine.id),
    ]) {
      await expectApiError(call(), Anthropic.NotFoundError, NOT_FOUND);
    }
    expect(await all(other.beta.dreams.list({ include_archived: true }))).toEqual([]);
    await other.beta.memoryStores.delete(theirStore.id);

    // Nothing the refused requests named was written: one new dream (mine), one new store (its output).
    const dreamsAfter = (await all(client.beta.dreams.list({ include_archived: true }))).map((d) => d.id);
    expect(dreamsAfter.filter((id) => !dreamsBefore.includes(id))).toEqual([mine.id]);
    const storesAfter = (await storeIds()).filter((id) => !storesBefore.includes(id));
    expect(storesAfter.sort()).toEqual(
      [archivedStore.id, (await client.beta.dreams.retrieve(mine.id)).outputs[0]!.memory_store_id].sort(),
    );
    const sessionsAfter = (await all(client.beta.sessions.list({ include_archived: true }))).length;
    // The two subjects' sessions, and the one dream's own session.
    expect(sessionsAfter).toBe(sessionsBefore + 3);
  });
});
