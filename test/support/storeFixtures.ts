import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import { EMPTY_METER, EMPTY_USAGE } from "../../src/coordinator/facts.js";
import type {
  CoordinatorStores,
  ExecutableAgentSnapshot,
  SessionRecord,
} from "../../src/coordinator/ports.js";
import type { Clock } from "../../src/kernel/clock.js";
import { newId } from "../../src/kernel/ids.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import type { Db } from "../../src/stores/sql/db.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";
import { testAudit } from "./adminAuditFixtures.js";
import { openTestPostgres, postgresUnavailable } from "./postgresFixtures.js";

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

/** Opened stores and how to dispose of everything they hold (database, schema, pool). */
export interface OpenedStores {
  stores: CoordinatorStores;
  /** The database itself, for rows no store would write (a session pinned to a revision that is gone). */
  db: Db;
  close(): Promise<void>;
}

export interface StoreFixture {
  handle: { close(): Promise<void> };
  stores: CoordinatorStores;
  clock: ManualClock;
  session: SessionRecord;
}

/**
 * The two executors of the write plans under one conformance suite, each on a real, fresh
 * database: SQLite's synchronous stores, and PostgreSQL's (its own schema per fixture).
 */
export const STORE_BACKENDS = {
  "SQLite synchronous stores": async (clock: Clock): Promise<OpenedStores> => {
    const handle = await openSqlite(":memory:");
    return { stores: sqliteCoordinatorStores(handle, clock), db: handle.db, close: () => handle.close() };
  },
  "PostgreSQL stores": async (clock: Clock): Promise<OpenedStores> => {
    const pg = await openTestPostgres();
    return {
      stores: postgresCoordinatorStores(pg.handle, clock),
      db: pg.handle.db,
      close: () => pg.dispose(),
    };
  },
} as const;
export type StoreBackend = keyof typeof STORE_BACKENDS;
export const BACKEND_NAMES = Object.keys(STORE_BACKENDS) as StoreBackend[];

/**
 * Why a backend cannot run on this machine, or null. Only PostgreSQL can be missing, and only
 * outside CI (see `postgresUnavailable`); the suites skip it then, visibly, with this reason.
 */
export function backendUnavailable(backend: StoreBackend): string | null {
  return backend === "PostgreSQL stores" ? postgresUnavailable() : null;
}

/** A fresh store holding one session with one queued run. */
export async function sessionWithQueuedRun(
  backend: StoreBackend = "SQLite synchronous stores",
  /** Session fields to seed instead of the defaults (metadata, data subject). */
  session: Partial<SessionRecord> = {},
): Promise<StoreFixture & { runId: string; db: Db }> {
  const clock = new ManualClock();
  const opened = await STORE_BACKENDS[backend](clock);
  try {
    const fixture = await seedQueuedRun(opened.stores, clock, session);
    return { ...fixture, db: opened.db, handle: { close: () => opened.close() } };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** Seeds an environment, a session and one queued run into `stores`. */
export async function seedQueuedRun(
  stores: CoordinatorStores,
  clock: ManualClock,
  fields: Partial<SessionRecord> = {},
): Promise<Omit<StoreFixture, "handle"> & { runId: string }> {
  const session = await seedSession(stores, clock, fields);
  const now = clock.now();
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
  return { stores, clock, session, runId };
}

/** Seeds an environment and an idle session (no run, no history) into `stores`. */
export async function seedSession(
  stores: Pick<CoordinatorStores, "environments" | "sessions">,
  clock: ManualClock,
  fields: Partial<SessionRecord> = {},
): Promise<SessionRecord> {
  const now = clock.now();
  const environmentId = newId("env", now);
  await stores.environments.create(
    {
      id: environmentId,
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
    },
    testAudit("environment"),
  );
  const session: SessionRecord = {
    id: newId("sesn", now),
    workspaceId: "wrkspc_test",
    agent: TEST_AGENT,
    environmentId,
    environmentRevision: 1,
    threadId: newId("sthr", now),
    title: null,
    metadata: {},
    resources: [],
    vaultIds: [],
    credentialPins: [],
    budget: null,
    status: "idle",
    pending: [],
    usage: { ...EMPTY_USAGE },
    meter: { ...EMPTY_METER },
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    dataSubject: null,
    ...fields,
  };
  await stores.sessions.create(session);
  return session;
}

export function op(
  fixture: Pick<StoreFixture, "clock" | "session"> & { runId: string },
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
