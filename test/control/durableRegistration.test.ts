/**
 * Durable registration, end to end over the real SQL publication store and the real catalog
 * (LocalRegistrar) on a SQLite file and on PostgreSQL: a Coordinator that cannot be reached fails
 * no authoring call, the reconciler lands the publication once it answers (backing off while it
 * does not), a conflicting fingerprint is refused for good, and a rebuild re-registers everything.
 *
 * PostgreSQL is never skipped here: without AWAKEN_TEST_DATABASE_URL these tests fail, saying so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentService } from "../../src/control/agentService.js";
import type { PublicationStore } from "../../src/control/ports.js";
import type { RegistrationLog } from "../../src/control/publicationRegistration.js";
import { RegistrationReconciler } from "../../src/control/registrationReconciler.js";
import type {
  CatalogStore,
  ExecutableAgentRegistrar,
  ExecutableAgentSnapshot,
  RegistrationReceipt,
} from "../../src/coordinator/ports.js";
import { LocalRegistrar } from "../../src/coordinator/registrar.js";
import { fingerprint } from "../../src/kernel/canonicalJson.js";
import { AwakenError } from "../../src/kernel/errors.js";
import type { Db } from "../../src/stores/sql/db.js";
import { controlStores, coordinatorStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres } from "../support/postgresFixtures.js";
import { ManualClock } from "../support/storeFixtures.js";

const WS = "wrkspc_reg";
const BY = { workspaceId: WS, actor: "cli" };
/** In every definition: no log line may carry it. */
const SECRET_PROMPT = "system prompt that never reaches a log";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const BACKENDS: Record<string, () => Promise<{ db: Db; dialect: "sqlite" | "postgres" }>> = {
  "SQLite file": async () => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-registration-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    cleanups.push(async () => {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { db: handle.db as Db, dialect: "sqlite" };
  },
  PostgreSQL: async () => {
    const test = await openTestPostgres();
    cleanups.push(() => test.dispose());
    return { db: test.handle.db as Db, dialect: "postgres" };
  },
};

/** The Coordinator as seen over a network: down (throws `unavailable`) or up (the real catalog). */
class RemoteCoordinator implements ExecutableAgentRegistrar {
  down = false;
  /** An agent whose registration it rejects with a deterministic error other than a conflict. */
  rejects: string | null = null;
  attempts = 0;
  succeeded = 0;
  /** Runs before the next registration reaches the catalog (another writer got there first). */
  before: ((snapshot: ExecutableAgentSnapshot) => Promise<void>) | null = null;

  constructor(private readonly local: LocalRegistrar) {}

  async register(snapshot: ExecutableAgentSnapshot): Promise<RegistrationReceipt> {
    this.attempts += 1;
    if (this.down) throw new AwakenError("unavailable", "coordinator unreachable", { retryable: true });
    if (this.rejects === snapshot.agentId) throw new AwakenError("invalid_request", "rejected");
    const before = this.before;
    this.before = null;
    await before?.(snapshot);
    const receipt = await this.local.register(snapshot);
    this.succeeded += 1;
    return receipt;
  }
}

function recordingLog(): RegistrationLog & { lines: string[] } {
  const lines: string[] = [];
  const record = (fields: object, message: string) => lines.push(`${message} ${JSON.stringify(fields)}`);
  return { lines, info: record, warn: record, error: record };
}

async function setup(backend: string) {
  const { db, dialect } = await BACKENDS[backend]!();
  const clock = new ManualClock();
  const store: PublicationStore = controlStores(db).publications;
  const catalog: CatalogStore = coordinatorStores(db, clock, dialect).catalog;
  const coordinator = new RemoteCoordinator(new LocalRegistrar(catalog, clock));
  const log = recordingLog();
  const agents = new AgentService(store, coordinator, clock, log);
  const reconciler = new RegistrationReconciler({ store, registrar: coordinator, clock, log, pollMs: 5_000 });
  cleanups.push(() => reconciler.stop());
  const create = (name: string) => {
    clock.advance(1_000);
    return agents.create(BY, { name, model: "claude-sonnet-4-5", system: SECRET_PROMPT });
  };
  return { db, clock, store, catalog, coordinator, log, agents, reconciler, create };
}

async function errorOf(promise: Promise<unknown>): Promise<AwakenError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof AwakenError)) throw new Error(`expected an AwakenError, got ${String(error)}`);
  return error;
}

describe.each(Object.keys(BACKENDS))("durable registration on %s", (backend) => {
  it("create and update succeed while the coordinator is down; the reconciler lands them once, backing off meanwhile", async () => {
    const { store, catalog, coordinator, log, agents, reconciler, create } = await setup(backend);
    coordinator.down = true;
    const created = await create("a");
    const id = created.head.id;
    const updated = await agents.update(BY, id, { system: `${SECRET_PROMPT} v2` });
    expect(updated.publication.version).toBe(2);
    expect((await store.listUnregistered(10)).map((p) => p.version)).toEqual([1, 2]);
    expect(await catalog.get(WS, id, 1)).toBeNull();

    const unavailable = await errorOf(agents.resolveForSession(WS, id));
    expect(unavailable).toMatchObject({ code: "unavailable", retryable: true });
    expect(unavailable.message).toContain("not yet registered with the coordinator");

    // Still down: each pass stops at the first failure and waits twice as long, up to 30 s.
    const delays: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      expect(await reconciler.runOnce()).toEqual({ registered: 0, refused: 0, pending: 2 });
      delays.push(reconciler.nextDelayMs);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    const attemptsWhileDown = coordinator.attempts;
    expect(attemptsWhileDown).toBe(2 + 1 + 7); // create, update, the session start, one per pass

    coordinator.down = false;
    expect(await reconciler.runOnce()).toEqual({ registered: 2, refused: 0, pending: 0 });
    expect(reconciler.nextDelayMs).toBe(5_000);
    expect(await reconciler.runOnce()).toEqual({ registered: 0, refused: 0, pending: 0 });
    expect(coordinator.succeeded).toBe(2);
    expect(await store.listUnregistered(10)).toEqual([]);
    expect((await catalog.get(WS, id, 1))?.fingerprint).toBe(created.publication.fingerprint);
    expect((await catalog.get(WS, id, 2))?.fingerprint).toBe(updated.publication.fingerprint);
    expect((await agents.resolveForSession(WS, id)).version).toBe(2);
    // Registered: a session start reads the row and does not ask the coordinator again.
    expect(coordinator.attempts).toBe(attemptsWhileDown + 2);

    expect(log.lines.length).toBeGreaterThan(0);
    for (const line of log.lines) expect(line).not.toContain(SECRET_PROMPT);
  });

  it("a conflicting fingerprint is refused: create fails closed, the row stays, it is never retried", async () => {
    const { store, catalog, coordinator, agents, reconciler, create } = await setup(backend);
    // Another definition already holds this identity in the catalog.
    coordinator.before = async (snapshot) => {
      const other = { ...snapshot.definition, system: "another definition" };
      await catalog.putIfAbsent({ ...snapshot, definition: other, fingerprint: fingerprint(other) }, 1);
    };
    const refused = await errorOf(create("a"));
    expect(refused).toMatchObject({ code: "publication_conflict", retryable: false });
    expect(coordinator.attempts).toBe(1);

    const [head] = (await agents.list(WS, { limit: 10, cursor: null, includeArchived: false })).data;
    expect(head?.latest.version).toBe(1);
    expect(await store.listUnregistered(10)).toEqual([]);
    expect(await reconciler.runOnce()).toEqual({ registered: 0, refused: 0, pending: 0 });
    expect(await reconciler.rebuild()).toBe(0);
    expect(await reconciler.runOnce()).toEqual({ registered: 0, refused: 0, pending: 0 });
    expect(coordinator.attempts).toBe(1);

    // A session start still asks (it converges if the catalog was repaired) and fails closed.
    const id = head?.head.id ?? "";
    expect(await errorOf(agents.resolveForSession(WS, id))).toMatchObject({ code: "publication_conflict" });
  });

  it("a conflict found by the reconciler is marked refused and the pass goes on", async () => {
    const { store, catalog, coordinator, reconciler, create } = await setup(backend);
    coordinator.down = true;
    const first = await create("a");
    const second = await create("b");
    coordinator.down = false;
    coordinator.before = async (snapshot) => {
      const other = { ...snapshot.definition, system: "another definition" };
      await catalog.putIfAbsent({ ...snapshot, definition: other, fingerprint: fingerprint(other) }, 1);
    };
    expect(await reconciler.runOnce()).toEqual({ registered: 1, refused: 1, pending: 0 });
    expect(await store.listUnregistered(10)).toEqual([]);
    expect((await catalog.get(WS, second.head.id, 1))?.fingerprint).toBe(second.publication.fingerprint);
    expect((await catalog.get(WS, first.head.id, 1))?.fingerprint).not.toBe(first.publication.fingerprint);
  });

  it("a publication the coordinator keeps rejecting stays pending without holding back later pages", async () => {
    const { db, clock, store, catalog, coordinator, log, create } = await setup(backend);
    coordinator.down = true;
    const rejected = await create("a");
    const b = await create("b");
    const c = await create("c");
    coordinator.down = false;
    coordinator.rejects = rejected.head.id;
    const reconciler = new RegistrationReconciler({ store, registrar: coordinator, clock, log, batch: 1 });
    expect(await reconciler.runOnce()).toEqual({ registered: 2, refused: 0, pending: 1 });
    expect(reconciler.nextDelayMs).toBe(5_000); // not a backoff: the Coordinator answers
    for (const p of [b.publication, c.publication]) {
      expect((await catalog.get(WS, p.agentId, 1))?.fingerprint).toBe(p.fingerprint);
    }
    expect((await store.listUnregistered(10)).map((p) => p.agentId)).toEqual([rejected.head.id]);
    expect(await db.selectFrom("executable_agents").select("agent_id").execute()).toHaveLength(2);
  });

  it("rebuild re-registers every publication into an emptied catalog", async () => {
    const { db, catalog, coordinator, agents, reconciler, create } = await setup(backend);
    const a = await create("a");
    const b = await create("b");
    const b2 = await agents.update(BY, b.head.id, { system: "v2" });
    expect(coordinator.succeeded).toBe(3);
    expect(await reconciler.runOnce()).toEqual({ registered: 0, refused: 0, pending: 0 });

    await db.deleteFrom("executable_agents").execute(); // the Coordinator lost its catalog
    expect(await catalog.get(WS, a.head.id, 1)).toBeNull();
    expect(await reconciler.rebuild()).toBe(3);
    expect(await reconciler.runOnce()).toEqual({ registered: 3, refused: 0, pending: 0 });
    for (const p of [a.publication, b.publication, b2.publication]) {
      expect((await catalog.get(WS, p.agentId, p.version))?.fingerprint).toBe(p.fingerprint);
    }
  });

  it("started, it lands a publication by itself once the coordinator answers", async () => {
    const { store, catalog, coordinator, create } = await setup(backend);
    const reconciler = new RegistrationReconciler({
      store,
      registrar: coordinator,
      clock: new ManualClock(),
      log: recordingLog(),
      pollMs: 20,
      initialBackoffMs: 10,
      maxBackoffMs: 40,
    });
    cleanups.push(() => reconciler.stop());
    coordinator.down = true;
    const created = await create("a");
    reconciler.start();
    await vi.waitFor(() => expect(coordinator.attempts).toBeGreaterThanOrEqual(3), { timeout: 5_000 });
    coordinator.down = false;
    await vi.waitFor(async () => expect(await catalog.get(WS, created.head.id, 1)).not.toBeNull(), {
      timeout: 5_000,
    });
    await reconciler.stop();
    expect(coordinator.succeeded).toBe(1);
    expect(await store.listUnregistered(10)).toEqual([]);
  });
});
