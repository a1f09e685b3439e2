import { type Clock, systemClock } from "../../kernel/clock.js";
import type { ReadinessProbe, ReadinessReport } from "./readiness.js";

export interface ReadinessSources {
  /** The database's applied migrations (one cheap read); it failing or hanging means unreachable. */
  appliedMigrations(): Promise<string[]>;
  /** The migrations this build knows (the stores'), which the applied ones are compared with. */
  knownMigrations: readonly string[];
  /** The in-process workers' state; null when none are configured (`--workers 0`). */
  workers(): "starting" | "polling" | "draining" | "stopped" | null;
  /** True once SIGTERM started the drain. */
  draining(): boolean;
  /** Remote workers heard from recently; absent when none may connect (no worker token). */
  remoteWorkers?: () => number;
  /**
   * A split Coordinator's Control: true when some replica answers ready within the timeout.
   * Without it nothing needing Control (authentication included) can be served.
   */
  control?: (timeoutMs: number) => Promise<boolean>;
  /** How long the database (and Control) may take to answer (default 1 s). */
  timeoutMs?: number;
  /** How long one database answer is reused, so a probe storm costs one query (default 1 s). */
  cacheMs?: number;
  /** What the cache's age is measured on. */
  clock?: Clock;
}

type DatabaseState = Pick<ReadinessReport["checks"], "database" | "migrations"> & { reason?: string };
type ControlState = { control?: "ok" | "unreachable"; reason?: string };

/**
 * `/readyz`'s checks. The database read is shared by concurrent probes and reused for `cacheMs`;
 * the worker and drain states are read fresh each time (they cost nothing). Reasons are fixed
 * phrases: a driver's error message may carry a host or user name, so it never reaches the probe.
 */
export function readinessProbe(sources: ReadinessSources): ReadinessProbe {
  const timeoutMs = sources.timeoutMs ?? 1_000;
  const cacheMs = sources.cacheMs ?? 1_000;
  let cached: { at: number; state: Promise<DatabaseState>; control: Promise<ControlState> } | null = null;

  const probeDatabase = async (): Promise<DatabaseState> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    try {
      const applied = await Promise.race([sources.appliedMigrations(), timedOut]);
      if (applied === "timeout")
        return {
          database: "unreachable",
          migrations: "unknown",
          reason: `database: no answer within ${timeoutMs} ms`,
        };
      return { database: "ok", ...compareMigrations(applied, sources.knownMigrations) };
    } catch {
      return { database: "unreachable", migrations: "unknown", reason: "database: the query failed" };
    } finally {
      clearTimeout(timer);
    }
  };

  const probeControl = async (): Promise<ControlState> => {
    if (!sources.control) return {};
    const ok = await sources.control(timeoutMs).catch(() => false);
    return ok ? { control: "ok" } : { control: "unreachable", reason: "control: no replica answers ready" };
  };

  return async () => {
    const now = (sources.clock ?? systemClock).now();
    if (!cached || now - cached.at >= cacheMs)
      cached = { at: now, state: probeDatabase(), control: probeControl() };
    const [{ reason: ownReason, ...database }, { reason: controlReason, ...control }] = await Promise.all([
      cached.state,
      cached.control,
    ]);
    const databaseReason = ownReason ?? controlReason;
    const workerState = sources.workers();
    const workers = workerState === null ? "none" : workerState === "starting" ? "stopped" : workerState;
    const draining = sources.draining() || workers === "draining";
    const workersReason = workers === "none" || workers === "polling" ? undefined : `workers: ${workers}`;
    const reason = draining ? "draining: shutting down" : (databaseReason ?? workersReason);
    const ready = !draining && databaseReason === undefined && workersReason === undefined;
    const remote = sources.remoteWorkers ? { remote_workers: sources.remoteWorkers() } : {};
    return {
      ready,
      draining,
      checks: { ...database, workers, ...remote, ...control },
      ...(reason ? { reason } : {}),
    };
  };
}

function compareMigrations(
  applied: string[],
  known: readonly string[],
): Pick<DatabaseState, "migrations" | "reason"> {
  const missing = known.filter((name) => !applied.includes(name));
  const unknown = applied.filter((name) => !known.includes(name));
  // A newer build migrated this database: this process may not understand the schema any more.
  if (unknown.length > 0)
    return {
      migrations: "ahead",
      reason: `migrations: ${unknown.length} applied that this build does not know`,
    };
  if (missing.length > 0)
    return { migrations: "behind", reason: `migrations: ${missing.length} not applied (run awaken migrate)` };
  return { migrations: "current" };
}
