import type { ControlStores } from "../../control/ports.js";
import type { CoordinatorStores } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import { controlStores, coordinatorStores } from "../sql/storeBundles.js";
import type { PostgresHandle } from "./openPostgres.js";

/**
 * The role-narrowed bundles on PostgreSQL: the dialect-neutral Kysely stores, told they run on
 * PostgreSQL so claims skip locked runs and the fence and ledger lock the rows they decide on.
 */
export function postgresControlStores(handle: PostgresHandle): ControlStores {
  return controlStores(handle.db);
}

export function postgresCoordinatorStores(handle: PostgresHandle, clock: Clock): CoordinatorStores {
  return coordinatorStores(handle.db, clock, "postgres");
}
