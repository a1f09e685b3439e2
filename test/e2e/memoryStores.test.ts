/**
 * Memory stores, memories and memory versions through the official SDK over real HTTP, on SQLite
 * and on PostgreSQL: path-addressed memories with content-hash preconditions, directory listing
 * by prefix and depth, versions with their author, redaction, archiving, and clear 4xx answers for
 * every bad input (nothing written).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type {
  BetaManagedAgentsDeletedMemory,
  BetaManagedAgentsMemory,
  BetaManagedAgentsMemoryListItem,
  BetaManagedAgentsMemoryVersion,
} from "@anthropic-ai/sdk/resources/beta/memory-stores/index";
import type {
  BetaManagedAgentsDeletedMemoryStore,
  BetaManagedAgentsMemoryStore,
} from "@anthropic-ai/sdk/resources/beta/memory-stores/memory-stores";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startAllInOne } from "../../src/cli/allInOne.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { all, BAD_REQUEST, expectApiError, NOT_FOUND, RFC3339 } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const CONFLICT = { status: 409, type: "conflict_error" } as const;
const PRECONDITION = { status: 409, type: "memory_precondition_failed_error" } as const;
const PATH_CONFLICT = { status: 409, type: "memory_path_conflict_error" } as const;
/** Small limits so the tests reach them cheaply. */
const ENV = { AWAKEN_MEMORY_MAX_BYTES: "2048", AWAKEN_MEMORY_MAX_PER_STORE: "12" };

const BACKENDS = ["SQLite", "PostgreSQL"] as const;

describe.each(BACKENDS)("memory stores over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer({ env: ENV, ...(schema ? { databaseUrl: schema.url } : {}) });
    client = t.client;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  const newStore = (name = "User prefs") =>
    client.beta.memoryStores.create({ name, description: "what the user likes", metadata: { user: "u1" } });

  it("stores: create, retrieve, update, list (archived hidden unless asked), archive, delete", async () => {
    const store: BetaManagedAgentsMemoryStore = await newStore();
    expect(store).toMatchObject({
      type: "memory_store",
      name: "User prefs",
      description: "what the user likes",
      metadata: { user: "u1" },
      archived_at: null,
    });
    expect(store.id).toMatch(/^memstore_/);
    expect(store.created_at).toMatch(RFC3339);
    expect(await client.beta.memoryStores.retrieve(store.id)).toEqual(store);

    const bare = await client.beta.memoryStores.create({ name: "bare" });
    expect(bare).toMatchObject({ description: "", metadata: {} });

    const updated = await client.beta.memoryStores.update(store.id, {
      name: "Prefs",
      metadata: { user: null, tier: "pro" },
    });
    expect(updated).toMatchObject({
      name: "Prefs",
      description: "what the user likes",
      metadata: { tier: "pro" },
    });

    const archived = await client.beta.memoryStores.archive(store.id);
    expect(archived.archived_at).toMatch(RFC3339);
    expect((await client.beta.memoryStores.archive(store.id)).archived_at).toBe(archived.archived_at);
    await expectApiError(
      client.beta.memoryStores.update(store.id, { name: "x" }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: [/archived/],
      },
    );
    const listed = (await all(client.beta.memoryStores.list())).map((s) => s.id);
    expect(listed).toContain(bare.id);
    expect(listed).not.toContain(store.id);
    const withArchived = (await all(client.beta.memoryStores.list({ include_archived: true }))).map(
      (s) => s.id,
    );
    expect(withArchived).toContain(store.id);

    const since = (await all(client.beta.memoryStores.list({ "created_at[gte]": store.created_at }))).map(
      (s) => s.id,
    );
    expect(since).toContain(bare.id);
    expect(await all(client.beta.memoryStores.list({ "created_at[lte]": "2000-01-01T00:00:00Z" }))).toEqual(
      [],
    );
    await expectApiError(
      client.beta.memoryStores.list({ "created_at[gte]": "yesterday" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );

    const deleted: BetaManagedAgentsDeletedMemoryStore = await client.beta.memoryStores.delete(store.id);
    expect(deleted).toEqual({ id: store.id, type: "memory_store_deleted" });
    await expectApiError(client.beta.memoryStores.retrieve(store.id), Anthropic.NotFoundError, NOT_FOUND);
    await client.beta.memoryStores.delete(bare.id);
  });

  it("memories: create (basic), retrieve (full), preconditioned update and delete, versions with their author", async () => {
    const store = await newStore();
    const memories = client.beta.memoryStores.memories;
    const created: BetaManagedAgentsMemory = await memories.create(store.id, {
      path: "/notes/todo.md",
      content: "buy milk",
    });
    expect(created).toMatchObject({
      type: "memory",
      memory_store_id: store.id,
      path: "/notes/todo.md",
      content: null,
      content_sha256: sha("buy milk"),
      content_size_bytes: 8,
    });
    expect(created.id).toMatch(/^mem_/);
    expect(created.memory_version_id).toMatch(/^memver_/);
    const full = await memories.retrieve(created.id, { memory_store_id: store.id });
    expect(full.content).toBe("buy milk");
    expect(
      (await memories.retrieve(created.id, { memory_store_id: store.id, view: "basic" })).content,
    ).toBeNull();

    // A stale precondition: 409, nothing written.
    await expectApiError(
      memories.update(created.id, {
        memory_store_id: store.id,
        content: "buy bread",
        precondition: { type: "content_sha256", content_sha256: sha("something else") },
      }),
      Anthropic.ConflictError,
      { ...PRECONDITION, message: [created.id, /changed/] },
    );
    expect((await memories.retrieve(created.id, { memory_store_id: store.id })).content).toBe("buy milk");

    const updated = await memories.update(created.id, {
      memory_store_id: store.id,
      content: "buy bread",
      precondition: { type: "content_sha256", content_sha256: sha("buy milk") },
      view: "full",
    });
    expect(updated).toMatchObject({ content: "buy bread", content_sha256: sha("buy bread") });
    expect(updated.memory_version_id).not.toBe(created.memory_version_id);
    // Already exactly as asked: succeeds despite a stale hash, and adds no version.
    const same = await memories.update(created.id, {
      memory_store_id: store.id,
      content: "buy bread",
      precondition: { type: "content_sha256", content_sha256: sha("buy milk") },
    });
    expect(same.memory_version_id).toBe(updated.memory_version_id);
    // A rename keeps the id.
    const renamed = await memories.update(created.id, {
      memory_store_id: store.id,
      path: "/notes/shopping.md",
    });
    expect(renamed).toMatchObject({ id: created.id, path: "/notes/shopping.md" });

    await expectApiError(
      memories.delete(created.id, { memory_store_id: store.id, expected_content_sha256: sha("buy milk") }),
      Anthropic.ConflictError,
      PRECONDITION,
    );
    const deleted: BetaManagedAgentsDeletedMemory = await memories.delete(created.id, {
      memory_store_id: store.id,
      expected_content_sha256: sha("buy bread"),
    });
    expect(deleted).toEqual({ id: created.id, type: "memory_deleted" });
    await expectApiError(
      memories.retrieve(created.id, { memory_store_id: store.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );

    // The lineage outlives the memory, newest first, each version by this API key.
    const versions: BetaManagedAgentsMemoryVersion[] = await all(
      client.beta.memoryStores.memoryVersions.list(store.id, { memory_id: created.id }),
    );
    expect(versions.map((v) => [v.operation, v.path])).toEqual([
      ["deleted", "/notes/shopping.md"],
      ["modified", "/notes/shopping.md"],
      ["modified", "/notes/todo.md"],
      ["created", "/notes/todo.md"],
    ]);
    expect(versions[0]).toMatchObject({ content: null, content_sha256: null, content_size_bytes: null });
    expect(versions[3]).toMatchObject({
      content: null,
      content_sha256: sha("buy milk"),
      content_size_bytes: 8,
    });
    for (const v of versions) expect(v.created_by).toMatchObject({ type: "api_actor" });
    const apiKeyId = (versions[0]!.created_by as { api_key_id: string }).api_key_id;
    expect(apiKeyId).not.toContain(TEST_API_KEY);
    const modified = await all(
      client.beta.memoryStores.memoryVersions.list(store.id, { operation: "modified", view: "full" }),
    );
    expect(modified.map((v) => v.content)).toEqual(["buy bread", "buy bread"]);
    expect(
      await all(client.beta.memoryStores.memoryVersions.list(store.id, { api_key_id: apiKeyId })),
    ).toHaveLength(4);
    expect(
      await all(client.beta.memoryStores.memoryVersions.list(store.id, { session_id: "sesn_x" })),
    ).toHaveLength(0);
    const first = await client.beta.memoryStores.memoryVersions.retrieve(versions[3]!.id, {
      memory_store_id: store.id,
    });
    expect(first).toMatchObject({ operation: "created", content: "buy milk", redacted_at: null });
  });

  it("paths are unique and never overlap: the same path, an ancestor or a descendant is a 409 naming the memory", async () => {
    const store = await newStore();
    const memories = client.beta.memoryStores.memories;
    const notes = await memories.create(store.id, { path: "/notes/a.md", content: "" });
    for (const path of ["/notes/a.md", "/notes", "/notes/a.md/deeper"]) {
      const error = await expectApiError(
        memories.create(store.id, { path, content: "x" }),
        Anthropic.ConflictError,
        {
          ...PATH_CONFLICT,
          message: [notes.id],
        },
      );
      expect((error.error as { error: Record<string, unknown> }).error).toMatchObject({
        conflicting_memory_id: notes.id,
        conflicting_path: "/notes/a.md",
      });
    }
    const other = await memories.create(store.id, { path: "/notes-archive/a.md", content: null });
    expect(other.content_size_bytes).toBe(0);
    await expectApiError(
      memories.update(other.id, { memory_store_id: store.id, path: "/notes/a.md" }),
      Anthropic.ConflictError,
      PATH_CONFLICT,
    );
    // Paths are case-sensitive.
    await memories.create(store.id, { path: "/Notes/a.md", content: "" });
  });

  it("lists by prefix and depth: directories roll up into memory_prefix items, paged in path order", async () => {
    const store = await newStore();
    const memories = client.beta.memoryStores.memories;
    for (const path of [
      "/a.md",
      "/projects/foo/notes.md",
      "/projects/foo/todo.md",
      "/projects/bar.md",
      "/z/deep/x.md",
    ]) {
      await memories.create(store.id, { path, content: path });
    }
    const top: BetaManagedAgentsMemoryListItem[] = await all(memories.list(store.id, { depth: 1, limit: 2 }));
    expect(top.map((i) => [i.type, i.path])).toEqual([
      ["memory", "/a.md"],
      ["memory_prefix", "/projects/"],
      ["memory_prefix", "/z/"],
    ]);
    const projects = await all(memories.list(store.id, { path_prefix: "/projects/", depth: 1 }));
    expect(projects.map((i) => [i.type, i.path])).toEqual([
      ["memory", "/projects/bar.md"],
      ["memory_prefix", "/projects/foo/"],
    ]);
    const everything = await all(
      memories.list(store.id, { path_prefix: "/projects/", view: "full", limit: 1 }),
    );
    expect(everything.map((i) => (i.type === "memory" ? i.content : null))).toEqual([
      "/projects/bar.md",
      "/projects/foo/notes.md",
      "/projects/foo/todo.md",
    ]);
    const page = await memories.list(store.id, { limit: 100, view: "full" });
    expect(page.data).toHaveLength(5);
    expect(await all(memories.list(store.id, { path_prefix: "/proj/" }))).toEqual([]);
  });

  it("refuses bad paths, sizes and queries, each with a 400 naming the problem, writing nothing", async () => {
    const store = await newStore();
    const memories = client.beta.memoryStores.memories;
    const bad: Array<[string, RegExp]> = [
      ["notes.md", /start with \//],
      ["/a/../b", /\.\./],
      ["/a/./b", /\./],
      ["/a//b", /empty segment/],
      ["/a/", /empty segment/],
      ["/", /empty segment/],
      ["/a\u0000b", /NUL/],
      ["/a\nb", /control/],
      ["/a\u202eb", /format/],
      ["/a\u2028b", /U\+2028/],
      ["/a\\b", /backslash/],
      ["/cafe\u0301", /Normalization Form C/],
      [`/${"x".repeat(1100)}`, /1024/],
      [`/${"x".repeat(300)}`, /255 bytes/],
      [`/${Array.from({ length: 21 }, () => "s").join("/")}`, /21 segments; at most 20/],
    ];
    for (const [path, message] of bad) {
      await expectApiError(memories.create(store.id, { path, content: "x" }), Anthropic.BadRequestError, {
        ...BAD_REQUEST,
        message: [/path/, message],
      });
    }
    await expectApiError(
      memories.create(store.id, { path: "/big.md", content: "é".repeat(1025) }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/2050 bytes/, /2048/] },
    );
    const ok = await memories.create(store.id, { path: "/ok.md", content: "x" });
    await expectApiError(
      memories.update(ok.id, { memory_store_id: store.id, path: "/../etc/passwd" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      memories.update(ok.id, {
        memory_store_id: store.id,
        content: "y",
        precondition: { type: "content_sha256", content_sha256: "ABC" },
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/hexadecimal/] },
    );
    await expectApiError(
      memories.delete(ok.id, { memory_store_id: store.id, expected_content_sha256: "nope" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(memories.list(store.id, { path_prefix: "/notes" }), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: [/path_prefix/, /end with \//],
    });
    await expectApiError(
      memories.list(store.id, { path_prefix: "/../" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(memories.list(store.id, { depth: -1 }), Anthropic.BadRequestError, BAD_REQUEST);
    await expectApiError(
      memories.list(store.id, { view: "everything" as "full" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.beta.memoryStores.create({ name: "" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.beta.memoryStores.create({ name: "a\u0000b" }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.beta.memoryStores.create({ name: "n", description: "d".repeat(1025) }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    const listed = await all(memories.list(store.id));
    expect(listed.map((i) => i.path)).toEqual(["/ok.md"]);
  });

  it("a store holds at most AWAKEN_MEMORY_MAX_PER_STORE memories (409), and a delete frees a slot", async () => {
    const store = await newStore();
    const memories = client.beta.memoryStores.memories;
    const made: BetaManagedAgentsMemory[] = [];
    for (let i = 0; i < 12; i++)
      made.push(await memories.create(store.id, { path: `/m${i}.md`, content: "" }));
    await expectApiError(
      memories.create(store.id, { path: "/one-more.md", content: "" }),
      Anthropic.ConflictError,
      {
        ...CONFLICT,
        message: [/12 memories/],
      },
    );
    await memories.delete(made[0]!.id, { memory_store_id: store.id });
    await memories.create(store.id, { path: "/one-more.md", content: "" });
  });

  it("archived: memories can be read, deleted and redacted, not created or changed", async () => {
    const store = await newStore();
    const memories = client.beta.memoryStores.memories;
    const a = await memories.create(store.id, { path: "/a.md", content: "a" });
    const b = await memories.create(store.id, { path: "/b.md", content: "b" });
    await client.beta.memoryStores.archive(store.id);
    await expectApiError(
      memories.create(store.id, { path: "/c.md", content: "c" }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: [/archived/],
      },
    );
    await expectApiError(
      memories.update(a.id, { memory_store_id: store.id, content: "changed" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/archived/] },
    );
    expect((await memories.retrieve(a.id, { memory_store_id: store.id })).content).toBe("a");
    await memories.delete(b.id, { memory_store_id: store.id });
    const redacted = await client.beta.memoryStores.memoryVersions.redact(b.memory_version_id, {
      memory_store_id: store.id,
    });
    expect(redacted.redacted_at).toMatch(RFC3339);
  });

  it("redaction blanks a past version's path and content for good, keeps who wrote it, and refuses a current version", async () => {
    const store = await newStore();
    const memories = client.beta.memoryStores.memories;
    const versions = client.beta.memoryStores.memoryVersions;
    const secret = await memories.create(store.id, { path: "/secret.md", content: "my password is hunter2" });
    await expectApiError(
      versions.redact(secret.memory_version_id, { memory_store_id: store.id }),
      Anthropic.ConflictError,
      { ...CONFLICT, message: [/current content/] },
    );
    await memories.update(secret.id, { memory_store_id: store.id, content: "(removed)" });
    const redacted: BetaManagedAgentsMemoryVersion = await versions.redact(secret.memory_version_id, {
      memory_store_id: store.id,
    });
    expect(redacted).toMatchObject({
      id: secret.memory_version_id,
      operation: "created",
      path: null,
      content: null,
      content_sha256: null,
      content_size_bytes: null,
      created_by: { type: "api_actor" },
      redacted_by: { type: "api_actor" },
    });
    expect(redacted.redacted_at).toMatch(RFC3339);
    const again = await versions.retrieve(secret.memory_version_id, { memory_store_id: store.id });
    expect(again).toEqual(redacted);
    expect(await versions.redact(secret.memory_version_id, { memory_store_id: store.id })).toEqual(redacted);
    const everything = JSON.stringify(await all(versions.list(store.id, { view: "full" })));
    expect(everything).not.toContain("hunter2");
  });

  it("another workspace's stores, memories and versions answer 404, and nothing of theirs changes", async () => {
    const store = await newStore();
    const memory = await client.beta.memoryStores.memories.create(store.id, {
      path: "/mine.md",
      content: "mine",
    });
    const response = await fetch(`${t!.server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ role: "admin", workspace_id: "wrkspc_memory_other" }),
    });
    expect(response.status).toBe(200);
    const { key } = (await response.json()) as { key: string };
    const other = new Anthropic({ apiKey: key, baseURL: t!.server.url, maxRetries: 0 });
    const sid = { memory_store_id: store.id };
    const calls: Array<() => Promise<unknown>> = [
      () => other.beta.memoryStores.retrieve(store.id),
      () => other.beta.memoryStores.update(store.id, { name: "theirs" }),
      () => other.beta.memoryStores.archive(store.id),
      () => other.beta.memoryStores.delete(store.id),
      () => other.beta.memoryStores.memories.create(store.id, { path: "/x.md", content: "x" }),
      () => other.beta.memoryStores.memories.list(store.id),
      () => other.beta.memoryStores.memories.retrieve(memory.id, sid),
      () => other.beta.memoryStores.memories.update(memory.id, { ...sid, content: "theirs" }),
      () => other.beta.memoryStores.memories.delete(memory.id, sid),
      () => other.beta.memoryStores.memoryVersions.list(store.id),
      () => other.beta.memoryStores.memoryVersions.retrieve(memory.memory_version_id, sid),
      () => other.beta.memoryStores.memoryVersions.redact(memory.memory_version_id, sid),
    ];
    for (const call of calls) await expectApiError(call(), Anthropic.NotFoundError, NOT_FOUND);
    expect(await all(other.beta.memoryStores.list({ include_archived: true }))).toEqual([]);
    const mine = await client.beta.memoryStores.memories.retrieve(memory.id, sid);
    expect(mine).toMatchObject({ content: "mine", memory_version_id: memory.memory_version_id });
    expect((await client.beta.memoryStores.retrieve(store.id)).archived_at).toBeNull();
  });
});

describe("memory limits from the environment", () => {
  it.each([
    ["AWAKEN_MEMORY_MAX_BYTES", "100kb"],
    ["AWAKEN_MEMORY_MAX_BYTES", "0"],
    ["AWAKEN_MEMORY_MAX_PER_STORE", "-5"],
  ])("a bad %s (%s) stops start-up, naming the variable", async (name, value) => {
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-memory-limits-"));
    try {
      const starting = startAllInOne(
        {
          host: "127.0.0.1",
          port: 0,
          dataDir,
          workers: 1,
          leaseMs: 5_000,
          modelIdleTimeoutMs: 300_000,
          ssePingMs: 15_000,
          apiKey: TEST_API_KEY,
          retry: { baseDelayMs: 10, maxDelayMs: 50 },
          env: { [name]: value },
        },
        pino({ level: "silent" }),
      );
      await expect(starting).rejects.toThrow(name);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
