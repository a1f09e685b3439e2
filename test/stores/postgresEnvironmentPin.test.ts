import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import type { CoordinatorStores, EnvironmentRecord } from "../../src/coordinator/ports.js";
import { type CreateSessionCommand, SessionService } from "../../src/coordinator/sessionService.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { newId } from "../../src/kernel/ids.js";
import { openPostgres, type PostgresHandle } from "../../src/stores/postgres/openPostgres.js";
import { postgresCoordinatorStores } from "../../src/stores/postgres/postgresStores.js";
import { StatementCounter } from "../../src/stores/postgres/statementCounter.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import {
  openTestPostgres,
  postgresUnavailable,
  type TestPostgres,
  testDatabaseUrl,
} from "../support/postgresFixtures.js";
import { ManualClock, TEST_AGENT } from "../support/storeFixtures.js";

/**
 * A new session on PostgreSQL pins the environment this process read lately without reading it
 * again; its insert checks the pin is still the newest revision of a live environment. An update,
 * an archive or a deletion made by another replica since is seen: the session pins the newest
 * revision, or is refused as that revision says, and nothing is written on a stale pin.
 */
interface Replica {
  stores: CoordinatorStores;
  service: SessionService;
}

function replica(handle: PostgresHandle, clock: ManualClock): Replica {
  const stores = postgresCoordinatorStores(handle, clock);
  const ports = { ...stores, signals: new InProcessWakeSignals(), evidence: new InProcessLiveEvidenceBus() };
  return { stores, service: new SessionService(ports, clock) };
}

let fixture: TestPostgres | undefined;
let counted: PostgresHandle | undefined;
let clock: ManualClock;
let counter: StatementCounter;
let a: Replica;
let b: Replica;
let environment: EnvironmentRecord;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  fixture = await openTestPostgres();
  counter = new StatementCounter();
  counted = await openPostgres(testDatabaseUrl(), {
    schema: fixture.schema,
    maxConnections: 2,
    statementCounter: counter,
  });
  clock = new ManualClock();
  a = replica(counted, clock);
  b = replica(await fixture.openReplica(), clock);
  const now = clock.now();
  environment = {
    id: newId("env", now),
    workspaceId: TEST_AGENT.workspaceId,
    name: "pinned",
    description: null,
    scope: null,
    metadata: {},
    config: { type: "self_hosted" },
    revision: 1,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  };
  await b.stores.environments.create(environment, testAudit("environment"));
});
afterEach(async () => {
  await counted?.close();
  counted = undefined;
  await fixture?.dispose();
  fixture = undefined;
});

const command = (): CreateSessionCommand => ({
  workspaceId: environment.workspaceId,
  agent: TEST_AGENT,
  environmentId: environment.id,
  title: null,
  metadata: {},
  resources: [],
  vaultIds: [],
  budget: null,
  initialInputs: [],
});

async function statementsOf<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const before = counter.statements;
  const result = await work();
  return { result, statements: counter.statements - before };
}

const sessionCount = async () =>
  Number(
    (
      await fixture!.handle.db
        .selectFrom("sessions")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("a new PostgreSQL session's environment pin", () => {
  it("is read once, then known: the next session on it is one statement", async () => {
    const first = await statementsOf(() => a.service.create(command()));
    expect(first.statements).toBe(2);
    const second = await statementsOf(() => a.service.create(command()));
    expect(second.statements).toBe(1);
    expect(second.result.environmentRevision).toBe(1);
    // The session is whole: another replica reads it as written.
    expect(await b.stores.sessions.get(environment.workspaceId, second.result.id)).toMatchObject({
      environmentId: environment.id,
      environmentRevision: 1,
      threadId: second.result.threadId,
    });
  });

  it("pins the newest revision when another replica updated the environment since", async () => {
    await a.service.create(command());
    const next = {
      ...environment,
      revision: 2,
      config: { type: "self_hosted" as const },
      updatedAt: clock.now(),
    };
    expect(await b.stores.environments.update(next, true, testAudit("environment"))).toBe(true);
    const session = await a.service.create(command());
    expect(session.environmentRevision).toBe(2);
    expect(await sessionCount()).toBe(2);
  });

  it("is refused as an archived environment when another replica archived it since, writing nothing", async () => {
    await a.service.create(command());
    const archived = { ...environment, archivedAt: clock.now(), updatedAt: clock.now() };
    expect(await b.stores.environments.update(archived, false, testAudit("environment"))).toBe(true);
    await expect(a.service.create(command())).rejects.toMatchObject({ code: "environment_archived" });
    expect(await sessionCount()).toBe(1);
  });

  it("is refused as not found when another replica deleted the environment since, writing nothing", async () => {
    await a.service.create(command());
    expect(
      await b.stores.environments.delete(environment.workspaceId, environment.id, testAudit("environment")),
    ).toBe(true);
    await expect(a.service.create(command())).rejects.toMatchObject({ code: "environment_not_found" });
    expect(await sessionCount()).toBe(1);
  });
});
