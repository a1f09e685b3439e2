import { RegisteredAgentPinner } from "../../src/control/agentPinning.js";
import { AgentService } from "../../src/control/agentService.js";
import type { ControlStores } from "../../src/control/ports.js";
import { EnvironmentService } from "../../src/coordinator/environmentService.js";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import type { CoordinatorStores } from "../../src/coordinator/ports.js";
import { LocalRegistrar } from "../../src/coordinator/registrar.js";
import type { NameClaimTiming } from "../../src/coordinator/sessionEntryNames.js";
import { SessionEntryService } from "../../src/coordinator/sessionEntryService.js";
import { SessionService } from "../../src/coordinator/sessionService.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { systemClock } from "../../src/kernel/clock.js";
import type { PostgresHandle } from "../../src/stores/postgres/openPostgres.js";
import {
  postgresControlStores,
  postgresCoordinatorStores,
} from "../../src/stores/postgres/postgresStores.js";
import { controlStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../../src/stores/sqlite/sqliteStores.js";
import { openTestPostgres } from "../support/postgresFixtures.js";

/** The services one server process builds around its stores, as allInOne wires them. */
export function entryStack(coordinator: CoordinatorStores, control: ControlStores, timing?: NameClaimTiming) {
  const clock = systemClock; // real time: a waiting caller polls the name while another creates
  const ports = {
    ...coordinator,
    signals: new InProcessWakeSignals(),
    evidence: new InProcessLiveEvidenceBus(),
  };
  const agents = new AgentService(control.publications, new LocalRegistrar(ports.catalog, clock), clock);
  const environments = new EnvironmentService(ports.environments, clock);
  const sessions = new SessionService(ports, clock);
  const entry = new SessionEntryService({
    pinner: new RegisteredAgentPinner(agents),
    sessions,
    sessionRecords: ports.sessions,
    environments,
    environmentRecords: ports.environments,
    names: ports.sessionNames,
    clock,
    ...(timing ? { timing } : {}),
  });
  return { agents, environments, sessions, entry, names: ports.sessionNames };
}
export type EntryStack = ReturnType<typeof entryStack>;

export type EntryBackend = "SQLite" | "PostgreSQL";

/** Two stacks on one fresh database (two replicas on PostgreSQL; SQLite has one process). */
export async function openEntryStacks(
  backend: EntryBackend,
  timing?: NameClaimTiming,
): Promise<{ a: EntryStack; b: EntryStack; close(): Promise<void> }> {
  if (backend === "SQLite") {
    const handle = await openSqlite(":memory:");
    const stack = entryStack(sqliteCoordinatorStores(handle, systemClock), controlStores(handle.db), timing);
    return { a: stack, b: stack, close: () => handle.close() };
  }
  const pg = await openTestPostgres();
  const replica = await pg.openReplica();
  const on = (h: PostgresHandle) =>
    entryStack(postgresCoordinatorStores(h, systemClock), postgresControlStores(h), timing);
  return { a: on(pg.handle), b: on(replica), close: () => pg.dispose() };
}
