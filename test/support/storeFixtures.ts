import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import { EMPTY_USAGE } from "../../src/coordinator/facts.js";
import type {
  CoordinatorStores,
  ExecutableAgentSnapshot,
  SessionRecord,
} from "../../src/coordinator/ports.js";
import type { Clock } from "../../src/kernel/clock.js";
import { newId } from "../../src/kernel/ids.js";
import { coordinatorStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";

export class ManualClock implements Clock {
  constructor(public ms = 1_800_000_000_000) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export const TEST_AGENT: ExecutableAgentSnapshot = {
  workspaceId: "wrkspc_test",
  agentId: "agent_test",
  version: 1,
  fingerprint: "f",
  publishedAt: 0,
  definition: {
    name: "t",
    description: null,
    system: null,
    model: { id: "offline-test" },
    tools: [],
    mcp_servers: [],
    skills: [],
    metadata: {},
    multiagent: null,
    execution_identity: null,
  },
};

export interface StoreFixture {
  handle: SqliteHandle;
  stores: CoordinatorStores;
  clock: ManualClock;
  session: SessionRecord;
}

/**
 * Store implementations under one conformance suite: the dialect-neutral Kysely stores (which
 * PostgreSQL will use) and SQLite's synchronous hot paths, both on a real SQLite database.
 */
export const STORE_BACKENDS = {
  "kysely stores on SQLite": (handle: SqliteHandle, clock: Clock) => coordinatorStores(handle.db, clock),
  "SQLite synchronous stores": (handle: SqliteHandle, clock: Clock) => sqliteCoordinatorStores(handle, clock),
} as const;
export type StoreBackend = keyof typeof STORE_BACKENDS;
export const BACKEND_NAMES = Object.keys(STORE_BACKENDS) as StoreBackend[];

/** A real SQLite store (in memory) holding one session with one queued run. */
export async function sessionWithQueuedRun(
  backend: StoreBackend = "SQLite synchronous stores",
): Promise<StoreFixture & { runId: string }> {
  const clock = new ManualClock();
  const handle = await openSqlite(":memory:");
  const stores = STORE_BACKENDS[backend](handle, clock);
  const now = clock.now();
  await stores.environments.create({
    id: "env_test",
    workspaceId: "wrkspc_test",
    name: "e",
    description: null,
    scope: null,
    metadata: {},
    config: { type: "self_hosted" },
    revision: 1,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  });
  const session: SessionRecord = {
    id: newId("sesn", now),
    workspaceId: "wrkspc_test",
    agent: TEST_AGENT,
    environmentId: "env_test",
    environmentRevision: 1,
    threadId: newId("sthr", now),
    title: null,
    metadata: {},
    resources: [],
    vaultIds: [],
    budget: null,
    status: "idle",
    pending: [],
    usage: { ...EMPTY_USAGE },
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  };
  await stores.sessions.create(session);
  const runId = newId("run", now);
  await stores.ledger.append(
    session.id,
    () => ({
      facts: [
        { id: newId("sevt", now), type: "user.message", body: { content: [{ type: "text", text: "hi" }] } },
      ],
      effects: [{ kind: "start", runId }],
      echoIds: [],
    }),
    now,
  );
  return { handle, stores, clock, session, runId };
}

export function op(
  fixture: StoreFixture & { runId: string },
  claim: { owner: string; epoch: number },
  expectedVersion: number,
  factCount: number,
  settle?: CommitOperation["settle"],
  attempt = 0,
): CommitOperation {
  const facts = Array.from({ length: factCount }, () => ({
    id: newId("sevt", fixture.clock.now()),
    type: "agent.message",
    body: { content: [{ type: "text", text: "x" }] },
  }));
  return {
    opId: `op_${fixture.runId}_v${expectedVersion}_${claim.owner}_${claim.epoch}_${attempt}`,
    runId: fixture.runId,
    threadId: fixture.session.threadId,
    owner: claim.owner,
    epoch: claim.epoch,
    expectedVersion,
    facts,
    ...(settle ? { settle } : {}),
  };
}
