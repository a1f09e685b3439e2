import type { ControlStores } from "../../control/ports.js";
import type { CoordinatorStores, IdleSlots } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import { controlStores, coordinatorStores } from "../sql/storeBundles.js";
import type { CommitNotices } from "./commitNotices.js";
import { EnvironmentConfigs } from "./environmentConfigs.js";
import { InputReadCache } from "./inputReadCache.js";
import type { PostgresHandle } from "./openPostgres.js";
import { PostgresDispatchStore } from "./postgresDispatchStore.js";
import { PostgresEnvironmentStore } from "./postgresEnvironmentStore.js";
import { PostgresInputLedger } from "./postgresInputLedger.js";
import { PostgresSessionStore } from "./postgresSessionStore.js";

/**
 * The role-narrowed bundles on PostgreSQL: the dialect-neutral Kysely stores, told they run on
 * PostgreSQL so claims skip locked runs and the fence and ledger lock the rows they decide on, with
 * the hot write paths (claim, fenced commit, input append) in PostgreSQL-only SQL that needs fewer
 * round trips (same locks, same order, same decisions).
 */
export function postgresControlStores(handle: PostgresHandle): ControlStores {
  return controlStores(handle.db, "postgres");
}

/**
 * `notices`: the wake signals whose NOTIFY the hot commits carry (`NotifyWakeSignals`). `slots`:
 * this process's idle worker slots, which a send claims its run for when it knows the session.
 */
export function postgresCoordinatorStores(
  handle: PostgresHandle,
  clock: Clock,
  notices?: CommitNotices,
  slots?: IdleSlots,
): CoordinatorStores {
  // What this process wrote last to a session, so its next send can skip reading it.
  const reads = new InputReadCache(clock);
  const environments = new EnvironmentConfigs();
  const dispatch = new PostgresDispatchStore(handle.db, handle.pool, clock, notices, reads, environments);
  const handOffs = slots
    ? { slots, environments, rememberHead: dispatch.remember.bind(dispatch) }
    : undefined;
  return {
    ...coordinatorStores(handle.db, clock, "postgres"),
    sessions: new PostgresSessionStore(handle.db, handle.pool, notices, reads),
    // What a new session pins, known from a recent read; the session's insert checks it.
    environments: new PostgresEnvironmentStore(handle.db, clock),
    ledger: new PostgresInputLedger(handle.db, handle.pool, notices, reads, handOffs),
    dispatch,
  };
}
