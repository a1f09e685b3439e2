/**
 * On PostgreSQL an erasure's row updates leave the old row versions (dead tuples) in the tables'
 * files: the content is still on disk after a checkpoint. With `AWAKEN_ERASURE_VACUUM=full` the
 * erasure rewrites the tables it touched, and the planted content is in no file of this test's
 * schema (tables, their TOAST tables and indexes), read byte by byte from the server's data directory.
 * The default (`plain`) frees the space and says so, but leaves the bytes until they are reused.
 * The schema is on a private cluster of this file's own: VACUUM FULL keeps every old row version a
 * snapshot open anywhere on the server may still read (another database's included, measured), so
 * on the shared test server any other test file's open transaction could keep the content on disk.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptySchema, testDatabaseUrl } from "../support/postgresFixtures.js";
import { createPrivateCluster, dropPrivateCluster } from "../support/privatePostgres.js";
import { isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const SUBJECT = "user-erin";

/** This schema's relations (tables, their TOAST tables and indexes) whose files hold `needle`. */
async function relationsHolding(client: pg.Client, schema: string, needle: string): Promise<string[]> {
  await client.query("checkpoint");
  const dataDir = (await client.query<{ data_directory: string }>("show data_directory")).rows[0]!
    .data_directory;
  const { rows } = await client.query<{ name: string; path: string | null }>(
    `select c.relname as name, pg_relation_filepath(c.oid) as path from pg_class c
      where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'i')
     union all
     select c.relname || ' (toast)', pg_relation_filepath(c.reltoastrelid) from pg_class c
      where c.relnamespace = $1::regnamespace and c.reltoastrelid <> 0`,
    [schema],
  );
  const holding: string[] = [];
  for (const { name, path } of rows) {
    if (!path) continue;
    const file = join(dataDir, path);
    // A relation past 1 GiB continues in `<file>.1`, `<file>.2`, …
    const segments = readdirSync(dirname(file)).filter(
      (entry) => entry === basename(file) || new RegExp(`^${basename(file)}\\.\\d+$`).test(entry),
    );
    if (segments.some((segment) => readFileSync(join(dirname(file), segment)).includes(needle)))
      holding.push(name);
  }
  return holding.sort();
}

async function erase(t: TestServer) {
  const response = await fetch(`${t.server.url}/v1/awaken/data_subjects/${SUBJECT}/erasure`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}` },
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function plantTurn(t: TestServer, planted: string) {
  const agent = await t.client.beta.agents.create({ name: "vacuum", model: MODEL });
  const environment = await t.client.beta.environments.create({ name: "vacuum" });
  const session = await t.client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    title: `about ${planted}`,
    metadata: { awaken_data_subject: SUBJECT },
  });
  await t.client.beta.sessions.events.send(session.id, { events: [userMessage(`my secret is ${planted}`)] });
  await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle), 15_000);
}

let serverUrl: string;
beforeAll(async () => {
  testDatabaseUrl(); // never skipped: without the URL this fails with what to set
  serverUrl = await createPrivateCluster("vacuum");
}, 60_000);
afterAll(async () => {
  await dropPrivateCluster();
}, 60_000);

describe.each([
  ["full", "rewrites the tables it touched: the content is in no file of the schema after a checkpoint"],
  ["plain", "vacuums them by default, and says so"],
] as const)("erasure on PostgreSQL, AWAKEN_ERASURE_VACUUM=%s", (mode, rule) => {
  let t: TestServer;
  let client: pg.Client;
  let schema: Awaited<ReturnType<typeof emptySchema>>;
  beforeAll(async () => {
    schema = await emptySchema(serverUrl);
    t = await startTestServer({
      databaseUrl: schema.url,
      workerPollMs: 50,
      env: mode === "plain" ? {} : { AWAKEN_ERASURE_VACUUM: mode },
    });
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
  }, 60_000);
  afterAll(async () => {
    await client?.end();
    await t?.close();
    await schema?.drop();
  });

  it(rule, async () => {
    const planted = `planted-heap-${randomBytes(8).toString("hex")}`;
    await plantTurn(t, planted);
    // The scan sees the content where it lives before the erasure.
    expect(await relationsHolding(client, schema.schema, planted)).toEqual(
      expect.arrayContaining(["commits", "sessions"]),
    );
    const receipt = await erase(t);
    expect(receipt.status, JSON.stringify(receipt.json)).toBe(200);
    expect(receipt.json).toMatchObject({ removed: true, vacuum: mode });
    if (mode === "full") expect(await relationsHolding(client, schema.schema, planted)).toEqual([]);
  });
});
