/**
 * A dream's usage is its session's, read after the facts that end it. The session's usage is
 * projected in the transaction that commits its facts, so a reader that takes the session first and
 * the facts second can see the answer without the tokens that produced it. This test commits the
 * answer between those two reads, exactly where a concurrent worker can, and expects the completed
 * dream to count the answer's tokens.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { encodeFact } from "../../src/coordinator/factCodec.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import type { FactPayload } from "../../src/coordinator/factVocabulary.js";
import type { HistoryReader, SessionRecord } from "../../src/coordinator/ports.js";
import { DreamService } from "../../src/dreams/dreamService.js";
import type { DreamRecord } from "../../src/dreams/ports.js";
import { newId } from "../../src/kernel/ids.js";
import { SqlDreamStore } from "../../src/stores/sql/sqlDreamStore.js";
import { SqlMemoryStore } from "../../src/stores/sql/sqlMemoryStore.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";

const WORKSPACE = "wrkspc_test";
const ZERO = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const ANSWERED = { inputTokens: 120, outputTokens: 30, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

let dir: string;
let handle: SqliteHandle;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "awaken-dream-usage-"));
  handle = await openSqlite(join(dir, "awaken.db"));
});
afterEach(async () => {
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The thread's facts and its session's usage, as one commit moves them together. */
function dreamSession() {
  const facts: CommittedFact[] = [];
  let usage = ZERO;
  const append = (fact: FactPayload) =>
    facts.push({
      ...encodeFact({ id: `sevt_${facts.length + 1}`, ...fact }),
      sessionId: "sesn_dream",
      threadId: "thrd_dream",
      seq: facts.length + 1,
      createdAt: facts.length + 1,
    });
  append({ kind: "status_running" });
  const commitAnswer = () => {
    append({
      kind: "agent_message",
      content: [{ type: "text", text: JSON.stringify({ memories: [{ path: "/a.md", content: "A" }] }) }],
    });
    append({ kind: "status_idle", reason: { kind: "turn_ended" } });
    usage = ANSWERED;
  };
  const history: HistoryReader = {
    readThread: async (_thread, after, limit = 500) => facts.filter((f) => f.seq > after).slice(0, limit),
    threadVersion: async () => facts.length,
    listEvents: async () => ({ data: [], nextCursor: null }),
  };
  const record = () =>
    ({ id: "sesn_dream", workspaceId: WORKSPACE, threadId: "thrd_dream", usage }) as unknown as SessionRecord;
  return { history, record, commitAnswer };
}

it("a dream completed by a read that raced its answer's commit counts the answer's tokens", async () => {
  const session = dreamSession();
  let reads = 0;
  const memory = new SqlMemoryStore(handle.db, "sqlite");
  const dreams = new SqlDreamStore(handle.db, "sqlite");
  const service = new DreamService({
    store: dreams,
    memory,
    memoryLimits: { maxContentBytes: 1024, maxMemoriesPerStore: 50 },
    entry: { start: async () => Promise.reject(new Error("not used")) },
    sessions: { send: async () => Promise.reject(new Error("not used")), delete: async () => undefined },
    sessionRecords: {
      get: async () => {
        const record = session.record();
        // The worker commits the answer right after the first read of the session.
        if (++reads === 1) session.commitAnswer();
        return record;
      },
    },
    history: session.history,
    dreamer: { refFor: async () => Promise.reject(new Error("not used")) },
    clock: { now: () => 1_000 },
  });
  const dream: DreamRecord = {
    id: newId("drm"),
    workspaceId: WORKSPACE,
    status: "running",
    inputs: [
      { type: "memory_store", memory_store_id: "memstore_source" },
      { type: "sessions", session_ids: [] },
    ],
    instructions: null,
    model: { id: "offline-dreamer", speed: "standard" },
    outputBehavior: { type: "create_new" },
    outputStoreId: null,
    sessionId: "sesn_dream",
    error: null,
    usage: null,
    createdAt: 1,
    endedAt: null,
    archivedAt: null,
  };
  expect(await dreams.create(dream)).toEqual({ ok: true });

  const view = await service.get(WORKSPACE, dream.id);

  expect(view.dream.status).toBe("completed");
  expect(view.usage).toEqual(ANSWERED);
  expect(view.dream.usage).toEqual(ANSWERED);
});
