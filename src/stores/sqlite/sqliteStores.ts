import type { CoordinatorStores } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import { SqlHistoryReader } from "../sql/sqlHistoryReader.js";
import { coordinatorStores } from "../sql/storeBundles.js";
import type { SqliteHandle } from "./openSqlite.js";
import { SqliteDispatchStore } from "./sqliteDispatchStore.js";
import { SqliteHistoryReader } from "./sqliteHistoryReader.js";
import { SqliteInputLedger } from "./sqliteInputLedger.js";

/** The coordinator's stores on SQLite: the dialect-neutral ones plus synchronous hot write paths. */
export function sqliteCoordinatorStores(handle: SqliteHandle, clock: Clock): CoordinatorStores {
  return {
    ...coordinatorStores(handle.db, clock),
    history: new SqliteHistoryReader(handle.writer, new SqlHistoryReader(handle.db)),
    ledger: new SqliteInputLedger(handle.db, handle.writer),
    dispatch: new SqliteDispatchStore(handle.writer, clock),
  };
}
