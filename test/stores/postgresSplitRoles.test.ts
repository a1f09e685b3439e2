import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgres, type PostgresHandle } from "../../src/stores/postgres/openPostgres.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import {
  applySplitRoles,
  asSuperuser,
  dropSplitRoles,
  freshSplitRoleNames,
  roleUrl,
  type SplitRoleNames,
} from "../support/splitRoles.js";

// deploy/postgres/split-roles.sql on the real server: each process's role migrates and uses its own
// schema, and cannot read, write or even name anything in the other's, nor create in public.

/** Control's own tables: keys, tokens' hashes, sealed credentials, the audit, consent. */
const CONTROL_TABLES = [
  "api_keys",
  "vaults",
  "vault_credentials",
  "vault_credential_revisions",
  "credential_opens",
  "admin_audit",
  "data_subject_consents",
  "agents",
  "agent_publications",
];
/** The coordinator's: sessions and their content, runs, the work queue. */
const COORDINATOR_TABLES = ["sessions", "threads", "commits", "runs", "work_items", "executable_agents"];

const PERMISSION_DENIED = "42501";

const unavailable = postgresUnavailable();
const names: SplitRoleNames = freshSplitRoleNames();
const passwords: SplitRoleNames = {
  control: randomBytes(24).toString("base64url"),
  coordinator: randomBytes(24).toString("base64url"),
};
const handles: PostgresHandle[] = [];
let control: PostgresHandle;
let coordinator: PostgresHandle;

async function open(role: keyof SplitRoleNames, schema = names[role]): Promise<PostgresHandle> {
  const handle = await openPostgres(roleUrl(names[role], passwords[role], schema), { maxConnections: 2 });
  handles.push(handle);
  return handle;
}

/** The SQLSTATE a statement fails with, or "ok". */
async function outcome(db: Kysely<unknown>, statement: string): Promise<string> {
  try {
    await sql.raw(statement).execute(db);
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

function db(handle: PostgresHandle): Kysely<unknown> {
  return handle.db as unknown as Kysely<unknown>;
}

beforeAll(async () => {
  if (unavailable) return;
  try {
    await applySplitRoles(names, passwords);
    control = await open("control");
    coordinator = await open("coordinator");
  } catch (error) {
    await Promise.all(handles.map((h) => h.close()));
    await dropSplitRoles(names);
    throw error;
  }
});

afterAll(async () => {
  if (unavailable) return;
  await Promise.all(handles.splice(0).map((h) => h.close()));
  await dropSplitRoles(names);
  const left = await asSuperuser(async (client) => {
    const roles = await client.query("select rolname from pg_roles where rolname = any($1)", [
      [names.control, names.coordinator],
    ]);
    const schemas = await client.query("select nspname from pg_namespace where nspname = any($1)", [
      [names.control, names.coordinator],
    ]);
    return [...roles.rows.map((r) => r.rolname), ...schemas.rows.map((r) => r.nspname)];
  });
  expect(left).toEqual([]);
});

beforeEach((ctx) => {
  if (unavailable) ctx.skip(unavailable);
});

describe("split-roles.sql: one role and one schema per process", () => {
  it("lets each role migrate its own schema, with the migrations table in it, owned by the role", async () => {
    expect(control.schema).toBe(names.control);
    expect(coordinator.schema).toBe(names.coordinator);
    // Both ran every migration (a fresh schema each), and the same ones.
    expect(control.applied.length).toBeGreaterThan(0);
    expect(coordinator.applied).toEqual(control.applied);
    const tables = await asSuperuser(async (client) => {
      const { rows } = await client.query<{ schemaname: string; tableowner: string }>(
        "select schemaname, tableowner from pg_tables where tablename = 'kysely_migration' and schemaname = any($1) order by schemaname",
        [[names.control, names.coordinator]],
      );
      return rows;
    });
    expect(tables).toEqual([
      { schemaname: names.control, tableowner: names.control },
      { schemaname: names.coordinator, tableowner: names.coordinator },
    ]);
    for (const [handle, table] of [
      [control, "api_keys"],
      [coordinator, "sessions"],
    ] as const) {
      // Each reads its own tables, unqualified, through the search_path.
      expect(await outcome(db(handle), `select count(*) from ${table}`)).toBe("ok");
    }
  });

  it("denies the coordinator's role every table of the control schema (SQLSTATE 42501)", async () => {
    for (const table of CONTROL_TABLES) {
      expect([table, await outcome(db(coordinator), `select * from ${names.control}.${table}`)]).toEqual([
        table,
        PERMISSION_DENIED,
      ]);
    }
    expect(await outcome(db(coordinator), `insert into ${names.control}.admin_audit (id) values ('x')`)).toBe(
      PERMISSION_DENIED,
    );
    expect(await outcome(db(coordinator), `create table ${names.control}.planted (i int)`)).toBe(
      PERMISSION_DENIED,
    );
  });

  it("denies the control role every table of the coordinator schema (SQLSTATE 42501)", async () => {
    for (const table of COORDINATOR_TABLES) {
      expect([table, await outcome(db(control), `select * from ${names.coordinator}.${table}`)]).toEqual([
        table,
        PERMISSION_DENIED,
      ]);
    }
    expect(await outcome(db(control), `delete from ${names.coordinator}.events`)).toBe(PERMISSION_DENIED);
    expect(await outcome(db(control), `create table ${names.coordinator}.planted (i int)`)).toBe(
      PERMISSION_DENIED,
    );
  });

  it("lets neither role create a table in public, nor a schema of its own", async () => {
    for (const handle of [control, coordinator]) {
      expect(await outcome(db(handle), "create table public.awaken_split_planted (i int)")).toBe(
        PERMISSION_DENIED,
      );
      expect(await outcome(db(handle), "create schema awaken_split_planted")).toBe(PERMISSION_DENIED);
    }
  });

  it("refuses to open a process on the other's schema: a schema without USAGE is not on its path", async () => {
    await expect(open("coordinator", names.control)).rejects.toThrow(
      /no schema on the connection's search_path/,
    );
    await expect(open("control", names.coordinator)).rejects.toThrow(
      /no schema on the connection's search_path/,
    );
  });

  it("puts each role in its own schema on a URL that names no search_path", async () => {
    const url = new URL(roleUrl(names.coordinator, passwords.coordinator, names.coordinator));
    url.searchParams.delete("options");
    const handle = await openPostgres(url.toString(), { maxConnections: 1 });
    handles.push(handle);
    expect(handle.schema).toBe(names.coordinator);
    expect(handle.applied).toEqual([]);
  });

  it("can be run again: the same privileges, the migrated tables untouched", async () => {
    const privileges = () =>
      asSuperuser(async (client) => {
        const { rows } = await client.query(
          `select r.rolname as role, s.nspname as schema,
                  has_schema_privilege(r.oid, s.oid, 'USAGE') as usage,
                  has_schema_privilege(r.oid, s.oid, 'CREATE') as "create"
             from pg_roles r cross join pg_namespace s
            where r.rolname = any($1) and s.nspname = any($2)
            order by r.rolname::text collate "C", s.nspname::text collate "C"`,
          [
            [names.control, names.coordinator],
            [names.control, names.coordinator, "public"],
          ],
        );
        return rows;
      });
    const before = await privileges();
    // Only its own schema, usage and create; public: usage only.
    expect(before).toEqual([
      { role: names.control, schema: names.control, usage: true, create: true },
      { role: names.control, schema: names.coordinator, usage: false, create: false },
      { role: names.control, schema: "public", usage: true, create: false },
      { role: names.coordinator, schema: names.control, usage: false, create: false },
      { role: names.coordinator, schema: names.coordinator, usage: true, create: true },
      { role: names.coordinator, schema: "public", usage: true, create: false },
    ]);
    await sql`insert into admin_audit (id, workspace_id, actor, action, resource_type, resource_id, created_at)
      values ('aud_1', 'wrkspc_1', 'key_1', 'create', 'vault', 'vlt_1', 1)`.execute(db(control));
    // Drifted by hand since: a grant across that the script must take back.
    await asSuperuser((client) =>
      client.query(`grant usage on schema ${names.control} to ${names.coordinator}`),
    );
    await applySplitRoles(names, passwords);
    expect(await privileges()).toEqual(before);
    const audit = await sql<{ id: string }>`select id from admin_audit`.execute(db(control));
    expect(audit.rows).toEqual([{ id: "aud_1" }]);
    expect(await outcome(db(coordinator), `select * from ${names.control}.admin_audit`)).toBe(
      PERMISSION_DENIED,
    );
  });
});
