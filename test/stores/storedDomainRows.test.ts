import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CoordinatorStores } from "../../src/coordinator/ports.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import type { Db } from "../../src/stores/sql/db.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";
import { openTestPostgres } from "../support/postgresFixtures.js";
import { ManualClock, seedSession } from "../support/storeFixtures.js";

// Rows committed before the core had its own names (answer kinds, camelCase usage) read as domain
// values on both backends, and what the store writes next keeps the stored names byte for byte.
// PostgreSQL needs AWAKEN_TEST_DATABASE_URL: without it these fail, they never skip.

type Opened = { db: Db; stores: CoordinatorStores; close(): Promise<void> };
const BACKENDS: Record<string, (clock: ManualClock) => Promise<Opened>> = {
  "a SQLite file": async (clock) => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-stored-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    return {
      db: handle.db,
      stores: sqliteCoordinatorStores(handle, clock),
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  PostgreSQL: async (clock) => {
    const pg = await openTestPostgres();
    return {
      db: pg.handle.db,
      stores: postgresCoordinatorStores(pg.handle, clock),
      close: () => pg.dispose(),
    };
  },
};

let opened: Opened | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

/** As the product stored them before: the wire's answer names, snake_case usage. */
const SESSION_PENDING = '[{"eventId":"sevt_old","kind":"tool_result","mcp":true}]';
const SESSION_USAGE =
  '{"input_tokens":5,"output_tokens":6,"cache_read_input_tokens":7,"cache_creation_input_tokens":8}';
const HEAD_PENDING =
  '[{"eventId":"sevt_c","kind":"custom_tool_result"},{"eventId":"sevt_t","kind":"tool_confirmation","afterAllow":"tool_result"}]';
const HEAD_USAGE =
  '{"input_tokens":120,"output_tokens":42,"cache_read_input_tokens":77,"cache_creation_input_tokens":9}';

describe.each(Object.keys(BACKENDS))("stored pending and usage columns on %s", (backend) => {
  it("read as domain values, and the next commit stores the old encoding", async () => {
    const clock = new ManualClock();
    opened = await BACKENDS[backend]!(clock);
    const { db, stores } = opened;
    const session = await seedSession(stores, clock);

    // A session row as written before: no commit yet, so the row's own columns are the projection.
    await db
      .updateTable("sessions")
      .set({ pending_json: SESSION_PENDING, usage_json: SESSION_USAGE })
      .where("id", "=", session.id)
      .execute();
    const fromRow = await stores.sessions.get(session.workspaceId, session.id);
    expect(fromRow?.pending).toEqual([{ eventId: "sevt_old", kind: "server_tool_result", mcp: true }]);
    expect(fromRow?.usage).toEqual({
      inputTokens: 5,
      outputTokens: 6,
      cacheReadInputTokens: 7,
      cacheCreationInputTokens: 8,
    });

    // A commit row as written before: its projection supersedes the session row's.
    const now = clock.now();
    const facts = [
      ["sevt_c", "agent.custom_tool_use", { name: "weather", input: {} }],
      ["sevt_t", "agent.tool_use", { name: "bash", input: {}, evaluated_permission: "ask" }],
      [
        "sevt_k",
        "awaken.tool_awaits",
        { tool_use_id: "sevt_t", answer: "tool_confirmation", after_allow: "tool_result" },
      ],
      [
        "sevt_i",
        "session.status_idle",
        { stop_reason: { type: "requires_action", event_ids: ["sevt_c", "sevt_t"] }, stop_details: null },
      ],
    ];
    await db
      .insertInto("commits")
      .values({
        thread_id: session.threadId,
        base_version: 0,
        version: facts.length,
        session_id: session.id,
        facts_json: JSON.stringify(facts),
        created_at: now,
        status: "idle",
        pending_json: HEAD_PENDING,
        usage_json: HEAD_USAGE,
        op_id: null,
        run_id: null,
        payload_hash: null,
        settled: null,
        request_hash: null,
        body_hash: null,
        echo_json: null,
      })
      .execute();
    const fromHead = await stores.sessions.get(session.workspaceId, session.id);
    const headPending = [
      { eventId: "sevt_c", kind: "client_tool_result" },
      { eventId: "sevt_t", kind: "confirmation", afterAllow: "client" },
    ];
    expect(fromHead?.pending).toEqual(headPending);
    expect(fromHead?.usage).toEqual({
      inputTokens: 120,
      outputTokens: 42,
      cacheReadInputTokens: 77,
      cacheCreationInputTokens: 9,
    });

    // The client answers the custom call: the ledger decides on domain values and writes stored ones.
    let seen: unknown;
    await stores.ledger.append(
      session.id,
      (ctx) => {
        seen = ctx.session.pending;
        return {
          facts: [
            {
              id: "sevt_r",
              type: "user.custom_tool_result",
              body: { custom_tool_use_id: "sevt_c", content: [{ type: "text", text: "sunny" }] },
            },
          ],
          effects: [],
          echoIds: ["sevt_r"],
        };
      },
      now + 1,
    );
    expect(seen).toEqual(headPending);
    const rows = await db
      .selectFrom("commits")
      .select(["base_version", "pending_json", "usage_json"])
      .where("thread_id", "=", session.threadId)
      .orderBy("base_version")
      .execute();
    expect(rows.map((r) => [Number(r.base_version), r.pending_json, r.usage_json])).toEqual([
      [0, HEAD_PENDING, HEAD_USAGE],
      [4, '[{"eventId":"sevt_t","kind":"tool_confirmation","afterAllow":"tool_result"}]', HEAD_USAGE],
    ]);
    const after = await stores.sessions.get(session.workspaceId, session.id);
    expect(after?.pending).toEqual([{ eventId: "sevt_t", kind: "confirmation", afterAllow: "client" }]);
  });
});
