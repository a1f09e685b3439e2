// The per-turn cost goals, each printed with its measured figure and verdict. Figures that are
// counts (statements, round trips) are deterministic; CPU figures are taken as ratios of processes
// measured in the same run, and with --repeat the median over the runs decides and the spread
// (min–max) is shown, since one small shared machine makes any single reading noisy.

/** Platform (awaken processes) CPU ms per turn, PostgreSQL in-process workers, c=8, before this work. */
export const BASELINE_PG_C8_PLATFORM_MS = 14.5;
/** The bench client's (official SDK) CPU ms per turn in the same baseline run. */
export const BASELINE_PG_C8_CLIENT_MS = 6;

const MAX_STATEMENTS = 12;
const CPU_CUT = 5;
const REMOTE_RATIO = 1.3;
const SQLITE_PLATFORM_SHARE_MS = 2;
/** The level at which CPU per turn is judged (and the DBOS peer measured beside it). */
export const CPU_CONCURRENCY = 8;

const fixed = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
/** "m (min–max over n runs)" or just "m" for a single run. */
const spread = (xs, digits) =>
  xs.length > 1
    ? `${fixed(median(xs), digits)} (${fixed(Math.min(...xs), digits)}–${fixed(Math.max(...xs), digits)} over ${xs.length} runs)`
    : fixed(xs[0], digits);
const verdict = (ok) => (ok ? "met" : "NOT met");

const runsOf = (rows, topology, concurrency) =>
  rows.filter(
    (r) =>
      !r.error && r.topology === topology && (concurrency === undefined || r.concurrency === concurrency),
  );

export function turnGoalLines(rows) {
  const lines = ["Per-turn cost goals:"];

  for (const topology of ["pg", "pg-remote"]) {
    const measured = runsOf(rows, topology).filter((r) => r.statements);
    if (measured.length === 0) {
      lines.push(`  statements per PostgreSQL turn (${topology}): not measured`);
      continue;
    }
    const worst = (key) => Math.max(...measured.map((r) => r.statements[key]));
    const statements = worst("statements");
    const unnamed = worst("unnamed");
    const emptyClaims = worst("emptyClaims");
    const notifyPerCommit = Math.max(
      ...measured.map((r) => r.statements.notifies / (r.perTurn.fenced + r.perTurn.inputs)),
    );
    lines.push(
      `  statements per PostgreSQL turn (${topology}, worst level): ${fixed(statements, 2)} in ` +
        `${fixed(worst("roundTrips"), 2)} round trips (goal ≤ ${MAX_STATEMENTS}) ${verdict(statements <= MAX_STATEMENTS + 1e-9)}; ` +
        `unnamed ${fixed(unnamed, 2)} (goal 0) ${verdict(unnamed === 0)}; ` +
        `claims that found nothing ${fixed(emptyClaims, 3)} (goal 0) ${verdict(emptyClaims === 0)}; ` +
        `NOTIFY per commit ${fixed(notifyPerCommit, 2)} (goal ≤ 1) ${verdict(notifyPerCommit <= 1 + 1e-9)}`,
    );
  }

  const pg = runsOf(rows, "pg", CPU_CONCURRENCY).filter((r) => r.cpu);
  if (pg.length === 0) lines.push(`  platform CPU per turn (pg, c=${CPU_CONCURRENCY}): not measured`);
  else {
    const platform = pg.map((r) => r.cpu.awaken);
    const perClient = pg.map((r) => r.cpu.awaken / r.cpu.client);
    const goalMs = BASELINE_PG_C8_PLATFORM_MS / CPU_CUT;
    const baselinePerClient = BASELINE_PG_C8_PLATFORM_MS / BASELINE_PG_C8_CLIENT_MS;
    lines.push(
      `  platform CPU per turn (pg, c=${CPU_CONCURRENCY}): ${spread(platform, 2)} ms (goal ≤ ${fixed(goalMs, 2)} ms, ` +
        `a fifth of ${BASELINE_PG_C8_PLATFORM_MS} ms) ${verdict(median(platform) <= goalMs)}; ` +
        `per ms of the SDK client's CPU in the same run: ${spread(perClient, 2)} ` +
        `(goal ≤ ${fixed(baselinePerClient / CPU_CUT, 2)}, a fifth of ${fixed(baselinePerClient, 2)}) ` +
        `${verdict(median(perClient) <= baselinePerClient / CPU_CUT)}`,
    );
  }

  const remote = runsOf(rows, "pg-remote", CPU_CONCURRENCY).filter((r) => r.cpu);
  if (pg.length === 0 || remote.length === 0)
    lines.push(`  remote vs in-process workers, platform CPU (c=${CPU_CONCURRENCY}): not measured`);
  else {
    // Paired by run: each repeat measured both topologies under the same machine conditions.
    const ratios = remote
      .map((r) => [r, pg.find((p) => p.run === r.run)])
      .filter(([, p]) => p)
      .map(([r, p]) => r.cpu.awaken / p.cpu.awaken);
    lines.push(
      `  remote vs in-process workers, platform CPU (c=${CPU_CONCURRENCY}): ${spread(ratios, 2)}× ` +
        `(goal ≤ ${REMOTE_RATIO}×) ${verdict(median(ratios) <= REMOTE_RATIO)}`,
    );
  }

  const sqlite = runsOf(rows, "sqlite", 1).filter((r) => r.cpu);
  if (sqlite.length === 0) lines.push("  platform share of the SQLite turn p50 (c=1): not measured");
  else {
    // At c=1 the turn is serial: what the client's own CPU does not explain is the platform's.
    const shares = sqlite.map((r) => r.p50 - r.cpu.client);
    lines.push(
      `  platform share of the SQLite turn p50 (c=1; p50 − SDK client CPU per turn): ${spread(shares, 2)} ms ` +
        `(goal ≤ ${SQLITE_PLATFORM_SHARE_MS} ms) ${verdict(median(shares) <= SQLITE_PLATFORM_SHARE_MS)}`,
    );
  }

  // The peer yardstick: DBOS's own process CPU per run of the same workload, measured right after
  // each pg level of the same repeat (bench/peerDbos.mjs); paired by run like the remote ratio.
  const paired = pg.filter((r) => r.dbos?.cpuMsPerRun > 0);
  if (paired.length === 0)
    lines.push(
      `  platform CPU per turn vs DBOS process CPU per run (pg, c=${CPU_CONCURRENCY}): not measured`,
    );
  else {
    const dbosMs = paired.map((r) => r.dbos.cpuMsPerRun);
    const ratios = paired.map((r) => r.cpu.awaken / r.dbos.cpuMsPerRun);
    lines.push(
      `  platform CPU per turn vs DBOS process CPU per run (pg, c=${CPU_CONCURRENCY}): DBOS ${spread(dbosMs, 2)} ms; ` +
        `ratio ${spread(ratios, 2)}× (goal ≤ 1×) ${verdict(median(ratios) <= 1)}`,
    );
  }
  return lines;
}
