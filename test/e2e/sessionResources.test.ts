import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import type {
  BetaManagedAgentsDeleteSessionResource,
  BetaManagedAgentsFileResource,
  BetaManagedAgentsGitHubRepositoryResource,
  BetaManagedAgentsMemoryStoreResource,
  BetaManagedAgentsSessionResource,
} from "@anthropic-ai/sdk/resources/beta/sessions/resources";
import type { BetaManagedAgentsSession } from "@anthropic-ai/sdk/resources/beta/sessions/sessions";
import SqliteDatabase from "better-sqlite3";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { all, BAD_REQUEST, expectApiError, MODEL, NOT_FOUND, RFC3339 } from "../support/sdkHelpers.js";
import { LOOPBACK, TEST_API_KEY, TEST_MASTER_KEY } from "../support/testServer.js";
import { plantedSecret, recordingClient } from "../support/vaultServer.js";

// Session resources through the SDK over real HTTP, on SQLite and on the real PostgreSQL server:
// resources given at creation and added later, every refusal, and a repository token that never
// comes back (not in an answer, not in the server's log).

interface Started {
  server: RunningServer;
  client: Anthropic;
  bodies: string[];
  logs: string[];
  /** SQLite only: a direct connection to the database file. */
  sql: SqliteDatabase.Database | null;
  close(): Promise<void>;
}

async function start(databaseUrl: string | undefined, dropSchema?: () => Promise<void>): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-sesrsc-"));
  const logs: string[] = [];
  const bodies: string[] = [];
  const server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      databaseUrl,
      workers: 0,
      leaseMs: 5_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: TEST_API_KEY,
      retry: {},
      env: { AWAKEN_MASTER_KEY: TEST_MASTER_KEY, AWAKEN_SESSION_RESOURCES_MAX: "4" },
      // As an operator would list a private git server: the loopback only, nothing else private.
      allowPrivateHosts: LOOPBACK,
    },
    pino({ level: "trace" }, { write: (line: string) => logs.push(line) }),
  );
  const sql = databaseUrl ? null : new SqliteDatabase(join(dataDir, "awaken.db"));
  return {
    server,
    client: recordingClient(server.url, bodies),
    bodies,
    logs,
    sql,
    close: async () => {
      sql?.close();
      await server.stop();
      await dropSchema?.();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const BACKENDS: Record<string, () => Promise<Started>> = {
  SQLite: () => start(undefined),
  PostgreSQL: async () => {
    const schema = await emptySchema();
    return start(schema.url, () => schema.drop());
  },
};
// PostgreSQL is left out only outside CI without a server (`postgresUnavailable`); in CI it runs.
const RUNNING = Object.keys(BACKENDS).filter((n) => n !== "PostgreSQL" || postgresUnavailable() === null);

const REPO_URL = "https://140.82.112.3/acme/widgets.git";

describe.each(RUNNING)("session resources on %s", (backend) => {
  let t: Started;
  let client: Anthropic;
  let agentId: string;
  let environmentId: string;
  const tokens: string[] = [];

  beforeAll(async () => {
    t = await BACKENDS[backend]!();
    client = t.client;
    agentId = (await client.beta.agents.create({ name: "resources", model: MODEL })).id;
    // Resources need the sandbox before the first tool call: the environment provisions eagerly.
    environmentId = (
      await client.beta.environments.create({
        name: "resources",
        config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
      })
    ).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const upload = async (name = "notes.txt") =>
    client.beta.files.upload({
      file: await toFile(Buffer.from(`hello ${name}`), name, { type: "text/plain" }),
    });
  const session = (
    resources: NonNullable<Parameters<Anthropic["beta"]["sessions"]["create"]>[0]["resources"]>,
  ) => client.beta.sessions.create({ agent: agentId, environment_id: environmentId, resources });
  const token = (label: string) => {
    const secret = plantedSecret(label);
    tokens.push(secret);
    return secret;
  };
  const sessionCount = async () => (await all(client.beta.sessions.list({ limit: 100 }))).length;

  it("a session created with a file, a memory store and a repository reads them back", async () => {
    const file = await upload();
    const store = await client.beta.memoryStores.create({
      name: "User Preferences!",
      description: "what they like",
    });
    const created: BetaManagedAgentsSession = await session([
      { type: "file", file_id: file.id },
      { type: "memory_store", memory_store_id: store.id, access: "read_only", instructions: "read first" },
      {
        type: "github_repository",
        url: REPO_URL,
        authorization_token: token("create"),
        checkout: { type: "branch", name: "main" },
      },
    ]);
    const [f, m, r] = created.resources;
    const fileResource = f as BetaManagedAgentsFileResource;
    expect(fileResource).toEqual({
      id: expect.stringMatching(/^sesrsc_/),
      type: "file",
      file_id: file.id,
      mount_path: `/mnt/session/uploads/${file.id}`,
      created_at: expect.stringMatching(RFC3339),
      updated_at: expect.stringMatching(RFC3339),
    });
    const memory = m as BetaManagedAgentsMemoryStoreResource;
    expect(memory).toEqual({
      type: "memory_store",
      memory_store_id: store.id,
      access: "read_only",
      name: "User Preferences!",
      description: "what they like",
      instructions: "read first",
      mount_path: "/mnt/memory/user-preferences",
    });
    const repo = r as BetaManagedAgentsGitHubRepositoryResource;
    expect(repo).toMatchObject({
      type: "github_repository",
      url: REPO_URL,
      checkout: { type: "branch", name: "main" },
      mount_path: "/workspace/widgets",
    });
    // The store's later rename does not reach the snapshot.
    await client.beta.memoryStores.update(store.id, { name: "renamed" });
    const again = await client.beta.sessions.retrieve(created.id);
    expect(again.resources).toEqual(created.resources);
    const listed: BetaManagedAgentsSessionResource[] = await all(
      client.beta.sessions.resources.list(created.id, { limit: 1 }),
    );
    expect(listed).toEqual(created.resources);
    // A memory store resource is named by its store's id; the others by their own.
    const byStore = await client.beta.sessions.resources.retrieve(store.id, { session_id: created.id });
    expect(byStore).toEqual(memory);
    expect(await client.beta.sessions.resources.retrieve(repo.id, { session_id: created.id })).toEqual(repo);
    // Sessions can be listed by a memory store they mount.
    const mounting = await all(client.beta.sessions.list({ memory_store_id: store.id }));
    expect(mounting.map((x) => x.id)).toEqual([created.id]);
    expect(await all(client.beta.sessions.list({ memory_store_id: "memstore_none" }))).toEqual([]);
    // Detaching the store: named by its id, answered with it.
    const detached: BetaManagedAgentsDeleteSessionResource = await client.beta.sessions.resources.delete(
      store.id,
      {
        session_id: created.id,
      },
    );
    expect(detached).toEqual({ id: store.id, type: "session_resource_deleted" });
    expect((await client.beta.sessions.retrieve(created.id)).resources).toEqual([fileResource, repo]);
    expect(await all(client.beta.sessions.list({ memory_store_id: store.id }))).toEqual([]);
  });

  it("add, list, retrieve, update (token rotation) and delete", async () => {
    const created = await session([{ type: "github_repository", url: REPO_URL, mount_path: "/src/app" }]);
    const repo = created.resources[0] as BetaManagedAgentsGitHubRepositoryResource;
    const file = await upload("data.csv");
    const added: BetaManagedAgentsFileResource = await client.beta.sessions.resources.add(created.id, {
      type: "file",
      file_id: file.id,
      mount_path: "/data/input.csv",
    });
    expect(added).toMatchObject({ type: "file", file_id: file.id, mount_path: "/data/input.csv" });
    const listed = await all(client.beta.sessions.resources.list(created.id));
    expect(listed.map((x) => (x as { id: string }).id)).toEqual([repo.id, added.id]);
    expect((await client.beta.sessions.retrieve(created.id)).resources).toEqual(listed);

    const rotated = await client.beta.sessions.resources.update(repo.id, {
      session_id: created.id,
      authorization_token: token("rotated"),
    });
    expect(rotated).toMatchObject({ id: repo.id, type: "github_repository", url: REPO_URL });
    await expectApiError(
      client.beta.sessions.resources.update(added.id, { session_id: created.id, authorization_token: "x" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/only github_repository/, /file/] },
    );

    const deleted: BetaManagedAgentsDeleteSessionResource = await client.beta.sessions.resources.delete(
      added.id,
      {
        session_id: created.id,
      },
    );
    expect(deleted).toEqual({ id: added.id, type: "session_resource_deleted" });
    await expectApiError(
      client.beta.sessions.resources.retrieve(added.id, { session_id: created.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    expect((await client.beta.sessions.retrieve(created.id)).resources).toEqual([rotated]);
  });

  it("refuses bad resources at creation, each naming the problem, and creates no session", async () => {
    const file = await upload();
    const store = await client.beta.memoryStores.create({ name: "archived" });
    await client.beta.memoryStores.archive(store.id);
    const before = await sessionCount();
    const refusals: Array<[Parameters<typeof session>[0], RegExp[], 400 | 404]> = [
      [[{ type: "file", file_id: "file_unknown" }], [/file "file_unknown" was not found/], 404],
      [[{ type: "memory_store", memory_store_id: "memstore_nope" }], [/memory store/], 404],
      [[{ type: "memory_store", memory_store_id: store.id }], [/archived/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "relative/x" }], [/not an absolute path/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/data/../etc/x" }], [/\.\. segment/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/data//x" }], [/not normalized/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/data/x/" }], [/not normalized/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/data\\x" }], [/backslash/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/data/\u0000x" }], [/NUL|control character/], 400],
      [[{ type: "file", file_id: file.id, mount_path: `/${"a".repeat(600)}` }], [/at most 512 bytes/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/" }], [/root directory/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/etc/passwd" }], [/under \/etc/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/proc" }], [/under \/proc/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/lib64/x" }], [/under \/lib64/], 400],
      [[{ type: "file", file_id: file.id, mount_path: "/opt/awaken/bin" }], [/under \/opt\/awaken/], 400],
      [
        [
          { type: "file", file_id: file.id, mount_path: "/data" },
          { type: "file", file_id: file.id, mount_path: "/data/inner" },
        ],
        [/overlaps the mount path/, /resources\[1\]/],
        400,
      ],
      [
        [
          { type: "file", file_id: file.id, mount_path: "/data/a" },
          { type: "file", file_id: file.id, mount_path: "/data/a" },
        ],
        [/already the mount path/],
        400,
      ],
      [
        Array.from({ length: 5 }, (_, i) => ({
          type: "file" as const,
          file_id: file.id,
          mount_path: `/f/${i}`,
        })),
        [/at most 4 resources/],
        400,
      ],
      [[{ type: "github_repository", url: "ftp://example.com/a/b" }], [/http\(s\)/], 400],
      [[{ type: "github_repository", url: `ftp://u:${token("ftp")}@example.com/a/b` }], [/http\(s\)/], 400],
      [[{ type: "github_repository", url: `not a url ${token("garbage")}` }], [/URL/], 400],
      [
        [{ type: "github_repository", url: `https://user:${token("userinfo")}@140.82.112.3/a/b` }],
        [/credentials/],
        400,
      ],
      [[{ type: "github_repository", url: "http://10.1.2.3/a/b.git" }], [/private/], 400],
      [
        [{ type: "github_repository", url: "http://169.254.169.254/a/b.git" }],
        [/link-local|private|reserved/],
        400,
      ],
      [[{ type: "github_repository", url: "http://[::1]/a/b.git" }], [/loopback|private/], 400],
      [[{ type: "github_repository", url: "https://140.82.112.3/" }], [/names no repository/], 400],
      [
        [{ type: "github_repository", url: REPO_URL, checkout: { type: "branch", name: "--upload-pack=x" } }],
        [/not a valid branch name/],
        400,
      ],
      [
        [{ type: "github_repository", url: REPO_URL, checkout: { type: "commit", sha: "HEAD~1" } }],
        [/commit SHA/],
        400,
      ],
      [
        [{ type: "github_repository", url: REPO_URL, authorization_token: "a\r\nX-Injected: 1" }],
        [/control character/],
        400,
      ],
    ];
    for (const [resources, message, status] of refusals) {
      const failure = session(resources);
      if (status === 404) await expectApiError(failure, Anthropic.NotFoundError, { ...NOT_FOUND, message });
      else await expectApiError(failure, Anthropic.BadRequestError, { ...BAD_REQUEST, message });
    }
    expect(await sessionCount()).toBe(before);
  });

  it("a loopback git server is reachable only because the operator listed it", async () => {
    const created = await session([{ type: "github_repository", url: "http://127.0.0.1:9/team/tools.git" }]);
    expect(created.resources[0]).toMatchObject({ mount_path: "/workspace/tools" });
  });

  it("add refuses what creation refuses, and another workspace's ids are not found", async () => {
    const created = await session([]);
    const file = await upload();
    await client.beta.sessions.resources.add(created.id, {
      type: "file",
      file_id: file.id,
      mount_path: "/in/a",
    });
    await expectApiError(
      client.beta.sessions.resources.add(created.id, { type: "file", file_id: file.id, mount_path: "/in" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/overlaps/] },
    );
    await expectApiError(
      client.beta.sessions.resources.add(created.id, {
        type: "file",
        file_id: file.id,
        mount_path: "/sys/x",
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/under \/sys/] },
    );
    await expectApiError(
      client.beta.sessions.resources.add(created.id, { type: "github_repository" } as never),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    for (let i = 1; i < 4; i++)
      await client.beta.sessions.resources.add(created.id, {
        type: "file",
        file_id: file.id,
        mount_path: `/in/b${i}`,
      });
    await expectApiError(
      client.beta.sessions.resources.add(created.id, { type: "file", file_id: file.id, mount_path: "/in/c" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/already mounts 4 resources/] },
    );

    const other = await otherWorkspace(t.server.url);
    const theirs = await other.beta.files.upload({ file: await toFile(Buffer.from("x"), "x.txt") });
    const theirStore = await other.beta.memoryStores.create({ name: "theirs" });
    await expectApiError(
      client.beta.sessions.resources.add(created.id, {
        type: "file",
        file_id: theirs.id,
        mount_path: "/in/d",
      }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      session([{ type: "memory_store", memory_store_id: theirStore.id }]),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    const [mine] = await all(client.beta.sessions.resources.list(created.id));
    const mineId = (mine as { id: string }).id;
    await expectApiError(other.beta.sessions.resources.list(created.id), Anthropic.NotFoundError, NOT_FOUND);
    await expectApiError(
      other.beta.sessions.resources.retrieve(mineId, { session_id: created.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      other.beta.sessions.resources.delete(mineId, { session_id: created.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.sessions.resources.retrieve("sesrsc_nope", { session_id: created.id }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
  });

  it("an access token reads a session's resources but cannot change them; an archived session's are fixed", async () => {
    const file = await upload();
    const created = await session([{ type: "file", file_id: file.id }]);
    const minted = await fetch(`${t.server.url}/v1/awaken/access_tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ operations: ["read", "send"], session_id: created.id, ttl_seconds: 600 }),
    });
    expect(minted.status).toBe(200);
    const { token: accessToken } = (await minted.json()) as { token: string };
    const browser = new Anthropic({ apiKey: accessToken, baseURL: t.server.url, maxRetries: 0 });
    expect(await all(browser.beta.sessions.resources.list(created.id))).toEqual(created.resources);
    const [only] = created.resources as BetaManagedAgentsFileResource[];
    await expect(
      browser.beta.sessions.resources.delete(only!.id, { session_id: created.id }),
    ).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(
      browser.beta.sessions.resources.add(created.id, { type: "file", file_id: file.id, mount_path: "/x" }),
    ).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    // A session the token is not confined to is not found.
    const elsewhere = await session([]);
    await expect(browser.beta.sessions.resources.list(elsewhere.id)).rejects.toBeInstanceOf(
      Anthropic.NotFoundError,
    );

    await client.beta.sessions.archive(created.id);
    await expectApiError(
      client.beta.sessions.resources.add(created.id, { type: "file", file_id: file.id, mount_path: "/y" }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/archived/] },
    );
    expect(await all(client.beta.sessions.resources.list(created.id))).toEqual(created.resources);
  });

  it("a deleted session's resources and sealed tokens are gone", async () => {
    const created = await session([
      { type: "github_repository", url: REPO_URL, authorization_token: token("deleted") },
    ]);
    await client.beta.sessions.delete(created.id);
    if (t.sql) {
      const left = t.sql
        .prepare("select count(*) as n from session_resources where session_id = ?")
        .get(created.id) as {
        n: number;
      };
      expect(left.n).toBe(0);
    }
    await expectApiError(client.beta.sessions.resources.list(created.id), Anthropic.NotFoundError, NOT_FOUND);
  });

  it("no repository token appears in any answer, in the log, or in plaintext in the database", async () => {
    expect(tokens.length).toBeGreaterThan(2);
    expect(t.logs.length).toBeGreaterThan(0);
    for (const secret of tokens) {
      expect(t.bodies.filter((b) => b.includes(secret))).toEqual([]);
      expect(t.logs.filter((l) => l.includes(secret))).toEqual([]);
    }
    if (t.sql) {
      const rows = t.sql.prepare("select * from session_resources").all();
      const text = JSON.stringify(rows);
      for (const secret of tokens) expect(text).not.toContain(secret);
      expect(text).toContain("sealed1:");
    }
  });
});

async function otherWorkspace(url: string): Promise<Anthropic> {
  const response = await fetch(`${url}/v1/awaken/api_keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      role: "admin",
      workspace_id: `wrkspc_sesrsc_${Date.now()}_${Math.random().toString(36).slice(2)}`,
    }),
  });
  expect(response.status).toBe(200);
  const { key } = (await response.json()) as { key: string };
  return new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
}
