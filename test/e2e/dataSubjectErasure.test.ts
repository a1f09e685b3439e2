/**
 * Data subjects through the official SDK over real HTTP, on SQLite and PostgreSQL: sessions name
 * their subject in metadata; an admin erases one subject and its planted content is then in no
 * column of any table, in no history read and in no stream opened after, tombstones stand in its
 * place with the same ids and sequence numbers; the other subject and the other workspace are
 * untouched; a repeat removes nothing; a non-admin key is refused. Consent is set and read per purpose.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import Anthropic, { PermissionDeniedError } from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHistoryInvariants } from "../support/historyInvariants.js";
import { emptySchema, testDatabaseUrl } from "../support/postgresFixtures.js";
import {
  expectApiError,
  history,
  isEndTurnIdle,
  MODEL,
  runTurn,
  StreamReader,
  userMessage,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const SUBJECT = "user-alice_01";
const OTHER_SUBJECT = "user-bob@example";

/** Every row of every table, as text, with the table it came from. */
type TableDump = Array<{ table: string; text: string }>;

interface Backend {
  t: TestServer;
  dump(): Promise<TableDump>;
  /** thread, seq and id of every stored fact. */
  skeleton(): Promise<string[]>;
  integrity(): Promise<string[]>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const t = await startTestServer({ workerPollMs: 50 });
  const db = new SqliteDatabase(join(t.dataDir, "awaken.db"), { readonly: true });
  return {
    t,
    dump: async () => {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
        .all() as Array<{ name: string }>;
      return tables.flatMap(({ name }) =>
        (db.prepare(`select * from "${name}"`).all() as unknown[]).map((row) => ({
          table: name,
          text: JSON.stringify(row),
        })),
      );
    },
    skeleton: async () =>
      (
        db.prepare("select thread_id, seq, id from events order by thread_id, seq").all() as Array<{
          thread_id: string;
          seq: number;
          id: string;
        }>
      ).map((r) => `${r.thread_id}/${r.seq}/${r.id}`),
    integrity: async () => {
      const problems: string[] = [];
      const threads = db
        .prepare(
          "select t.id, coalesce((select max(c.version) from commits c where c.thread_id = t.id), 0) as version from threads t",
        )
        .all() as Array<{
        id: string;
        version: number;
      }>;
      for (const thread of threads) {
        const seqs = (
          db.prepare("select seq from events where thread_id = ? order by seq").all(thread.id) as Array<{
            seq: number;
          }>
        ).map((r) => r.seq);
        if (seqs.length !== thread.version || seqs.some((s, i) => s !== i + 1))
          problems.push(`thread ${thread.id}: seqs ${seqs.join(",")} for version ${thread.version}`);
      }
      return problems;
    },
    close: async () => {
      db.close();
      await t.close();
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  testDatabaseUrl(); // never skipped: without the URL this fails with what to set
  const schema = await emptySchema();
  const t = await startTestServer({ databaseUrl: schema.url, workerPollMs: 50 });
  const client = new pg.Client({ connectionString: schema.url });
  await client.connect();
  return {
    t,
    dump: async () => {
      const { rows: tables } = await client.query<{ name: string }>(
        "select table_name as name from information_schema.tables where table_schema = $1",
        [schema.schema],
      );
      const out: TableDump = [];
      for (const { name } of tables) {
        const { rows } = await client.query(`select * from ${pg.escapeIdentifier(name)}`);
        for (const row of rows) out.push({ table: name, text: JSON.stringify(row) });
      }
      return out;
    },
    skeleton: async () =>
      (
        await client.query<{ thread_id: string; seq: string; id: string }>(
          "select thread_id, seq, id from events order by thread_id, seq",
        )
      ).rows.map((r) => `${r.thread_id}/${Number(r.seq)}/${r.id}`),
    integrity: async () => (await checkHistoryInvariants(schema.url)).violations,
    close: async () => {
      await client.end();
      await t.close();
      await schema.drop();
    },
  };
}

async function call(t: TestServer, method: string, path: string, key = TEST_API_KEY, body?: unknown) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const erase = (t: TestServer, subject: string, key = TEST_API_KEY) =>
  call(t, "POST", `/v1/awaken/data_subjects/${encodeURIComponent(subject)}/erasure`, key);

async function mint(t: TestServer, role: string, workspace?: string): Promise<string> {
  const { status, json } = await call(t, "POST", "/v1/awaken/api_keys", TEST_API_KEY, {
    role,
    ...(workspace ? { workspace_id: workspace } : {}),
  });
  expect(status, JSON.stringify(json)).toBe(200);
  return json.key as string;
}

const clientOf = (t: TestServer, key: string) =>
  new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });

async function sessionWithTurn(client: Anthropic, subject: string, planted: string) {
  const agent = await client.beta.agents.create({ name: "erasure", model: MODEL });
  const environment = await client.beta.environments.create({ name: "erasure" });
  const session = await client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    title: `about ${planted}`,
    metadata: { awaken_data_subject: subject, ticket: "T-1" },
  });
  await client.beta.sessions.events.send(session.id, { events: [userMessage(`my secret is ${planted}`)] });
  await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
  return session;
}

const plant = (label: string) => `planted-${label}-${randomBytes(8).toString("hex")}`;
const tablesHolding = (dump: TableDump, needle: string) =>
  [...new Set(dump.filter((row) => row.text.includes(needle)).map((row) => row.table))].sort();

describe.each([
  ["SQLite", sqliteBackend],
  ["PostgreSQL", postgresBackend],
])("erasure of a data subject's content (%s)", (_name, open) => {
  let b: Backend;
  beforeAll(async () => {
    b = await open();
  }, 60_000);
  afterAll(() => b?.close());

  it("leaves no copy of the subject's content anywhere, tombstones in its place, and touches nothing else", async () => {
    const { t } = b;
    const mine = plant("alice");
    const bobs = plant("bob");
    const elsewhere = plant("other-workspace");
    const first = await sessionWithTurn(t.client, SUBJECT, mine);
    const second = await sessionWithTurn(t.client, SUBJECT, mine);
    const bob = await sessionWithTurn(t.client, OTHER_SUBJECT, bobs);
    // The same subject id in another workspace is another workspace's subject.
    const otherAdmin = clientOf(t, await mint(t, "admin", "wrkspc_erasure-other"));
    const foreign = await sessionWithTurn(otherAdmin, SUBJECT, elsewhere);

    expect(tablesHolding(await b.dump(), mine)).toEqual(expect.arrayContaining(["commits", "sessions"]));
    const before = await b.skeleton();
    const historyBefore = await history(t.client, first.id);

    // Only an admin erases.
    const runtime = await mint(t, "runtime");
    const refused = await erase(t, SUBJECT, runtime);
    expect(refused.status).toBe(403);
    expect(tablesHolding(await b.dump(), mine).length).toBeGreaterThan(0);
    // A subject id is an opaque id, never a path or a query fragment.
    expect((await erase(t, "a b")).status).toBe(400);
    expect((await erase(t, ".hidden")).status).toBe(400);

    const receipt = await erase(t, SUBJECT);
    expect(receipt.status, JSON.stringify(receipt.json)).toBe(200);
    expect(receipt.json).toMatchObject({ type: "data_subject_erasure", subject_id: SUBJECT, removed: true });
    const counts = receipt.json.counts as Record<string, number>;
    expect(counts.sessions).toBe(2);
    expect(counts.facts).toBeGreaterThanOrEqual(4); // a user and an agent message per session at least
    expect(counts.titles).toBe(2);
    expect(counts.send_receipts).toBe(2);

    // No table holds the subject's content; the other subject and workspace keep theirs.
    const dump = await b.dump();
    expect(tablesHolding(dump, mine)).toEqual([]);
    expect(tablesHolding(dump, bobs)).toEqual(expect.arrayContaining(["commits", "sessions"]));
    expect(tablesHolding(dump, elsewhere)).toEqual(expect.arrayContaining(["commits", "sessions"]));
    // Ids and sequence numbers unchanged; history still whole.
    expect(await b.skeleton()).toEqual(before);
    expect(await b.integrity()).toEqual([]);

    // History reads show tombstones, same events, same ids, same order.
    const after = await history(t.client, first.id);
    expect(after.map((e) => [e.id, e.type])).toEqual(historyBefore.map((e) => [e.id, e.type]));
    expect(JSON.stringify(after)).not.toContain(mine);
    const user = after.find((e) => e.type === "user.message");
    expect(user?.content).toEqual([{ type: "text", text: "[erased]" }]);
    expect(after.find((e) => e.type === "agent.message")?.content).toEqual([
      { type: "text", text: "[erased]" },
    ]);
    const retrieved = await t.client.beta.sessions.retrieve(second.id);
    expect(retrieved.title).toBeNull();
    expect(retrieved.metadata).toMatchObject({ awaken_data_subject: SUBJECT, ticket: "T-1" });
    // Another edge's projection of the same history (AI SDK UI messages) shows the tombstone too.
    const uiMessages = await call(t, "GET", `/v1/ai-sdk/threads/${first.id}/messages`);
    expect(uiMessages.status).toBe(200);
    expect(JSON.stringify(uiMessages.json)).not.toContain(mine);
    expect(JSON.stringify(uiMessages.json)).toContain("[erased]");

    // A repeat removes nothing and says so.
    const again = await erase(t, SUBJECT);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({
      removed: false,
      counts: { sessions: 2, facts: 0, titles: 0, send_receipts: 0, push_notifications: 0 },
    });
    // A stream opened after: the session goes on with its tombstoned history; no old content comes back.
    const reader = await StreamReader.open(t.client, first.id);
    try {
      const turn = await runTurn(t.client, reader, first.id, "and now?");
      expect(JSON.stringify(turn)).not.toContain(mine);
    } finally {
      await reader.close();
    }

    // The other subject's and the other workspace's histories are as they were.
    expect(JSON.stringify(await history(t.client, bob.id))).toContain(bobs);
    expect(JSON.stringify(await history(otherAdmin, foreign.id))).toContain(elsewhere);

    // The audit lists both erasures (what was asked and removed, never the content).
    const audit = await call(t, "GET", `/v1/awaken/data_subjects/${SUBJECT}/erasures`);
    expect((audit.json.data as Array<{ id: string }>).map((r) => r.id)).toEqual([
      again.json.id,
      receipt.json.id,
    ]);
    expect(JSON.stringify(audit.json)).not.toContain(mine);
    // The other workspace's audit does not see this workspace's erasures.
    const otherAudit = await otherAdmin.get(`/v1/awaken/data_subjects/${SUBJECT}/erasures`);
    expect(otherAudit).toEqual({ data: [] });
    // The admin audit records the erasure that removed something (not the no-op repeat), with no content.
    const admin = await call(t, "GET", `/v1/awaken/audit?resource_type=data_subject&resource_id=${SUBJECT}`);
    expect(admin.status, JSON.stringify(admin.json)).toBe(200);
    const erasures = (admin.json.data as Array<{ action: string }>).filter((e) => e.action === "erase");
    expect(erasures).toHaveLength(1);
    expect(JSON.stringify(admin.json)).not.toContain(mine);
  }, 90_000);

  it("a session's subject is validated at creation and fixed afterwards", async () => {
    const { t } = b;
    const agent = await t.client.beta.agents.create({ name: "subject", model: MODEL });
    const environment = await t.client.beta.environments.create({ name: "subject" });
    const create = (subject: string) =>
      t.client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
        metadata: { awaken_data_subject: subject },
      });
    for (const bad of ["../etc/passwd", "a?b=c", "x#y", "", "%2e%2e", "-leading"]) {
      await expectApiError(create(bad), Anthropic.BadRequestError, {
        status: 400,
        type: "invalid_request_error",
      });
    }
    const session = await create("u-1");
    await expectApiError(
      t.client.beta.sessions.update(session.id, { metadata: { awaken_data_subject: "u-2" } }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: ["fixed when it is created"] },
    );
    await expectApiError(
      t.client.beta.sessions.update(session.id, { metadata: { awaken_data_subject: null } }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error" },
    );
    // Other metadata still changes.
    const updated = await t.client.beta.sessions.update(session.id, { metadata: { ticket: "T-2" } });
    expect(updated.metadata).toEqual({ awaken_data_subject: "u-1", ticket: "T-2" });
  });

  it("consent is recorded per subject and purpose by an admin, within its workspace", async () => {
    const { t } = b;
    const path = `/v1/awaken/data_subjects/${SUBJECT}/consents`;
    expect((await call(t, "GET", path)).json).toEqual({
      type: "data_subject_consents",
      subject_id: SUBJECT,
      consents: [],
    });
    const set = await call(t, "PUT", `${path}/content_capture_telemetry`, TEST_API_KEY, { granted: true });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
    expect(set.json.consents).toEqual([
      { purpose: "content_capture_telemetry", granted: true, updated_at: expect.any(String) },
    ]);
    const withdrawn = await call(t, "PUT", `${path}/content_capture_telemetry`, TEST_API_KEY, {
      granted: false,
    });
    expect(withdrawn.json.consents).toEqual([
      { purpose: "content_capture_telemetry", granted: false, updated_at: expect.any(String) },
    ]);
    expect((await call(t, "PUT", `${path}/marketing`, TEST_API_KEY, { granted: true })).status).toBe(400);
    expect(
      (await call(t, "PUT", `${path}/content_capture_telemetry`, TEST_API_KEY, { granted: "yes" })).status,
    ).toBe(400);
    // Each change of consent is in the admin audit, in order; a refused one is not.
    const admin = await call(t, "GET", `/v1/awaken/audit?resource_type=data_subject&action=consent`);
    expect(admin.status, JSON.stringify(admin.json)).toBe(200);
    expect(
      (admin.json.data as Array<{ resource_id: string }>).filter((e) => e.resource_id === SUBJECT),
    ).toHaveLength(2);
    const runtime = await mint(t, "runtime");
    await expectApiError(clientOf(t, runtime).get(path), PermissionDeniedError, {
      status: 403,
      type: "permission_error",
    });
  });
});
