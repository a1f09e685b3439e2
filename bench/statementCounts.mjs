// Counts the statements and round trips the platform sends PostgreSQL, from the product side:
// a server started with AWAKEN_BENCH_COUNT_STATEMENTS=<file> counts every statement its pool sends
// (src/stores/postgres/statementCounter.ts) and writes the counts to the file on SIGUSR2. Taken
// before and after the timed part like the store counts; remote workers reach PostgreSQL only
// through the server, so the server's pool is all of the platform's statements.
import { existsSync, readFileSync } from "node:fs";

const WAIT_MS = 5_000;

/** Asks the server `pid` for its counts and waits until it has written a newer snapshot. */
export async function statementSnapshot(pid, file) {
  const seen = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).seq : 0;
  process.kill(pid, "SIGUSR2");
  const deadline = performance.now() + WAIT_MS;
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    try {
      const counts = JSON.parse(readFileSync(file, "utf8"));
      if (counts.seq > seen) return counts;
    } catch {
      // Not written yet, or caught mid-write: read again.
    }
  }
  throw new Error(`the server wrote no statement counts to ${file} within ${WAIT_MS} ms`);
}

/** What the timed part sent: the difference of two snapshots, per kind too. */
export function statementDifference(after, before) {
  const kinds = {};
  for (const [kind, n] of Object.entries(after.kinds)) {
    const delta = n - (before.kinds[kind] ?? 0);
    if (delta > 0) kinds[kind] = delta;
  }
  return {
    statements: after.statements - before.statements,
    roundTrips: after.roundTrips - before.roundTrips,
    named: after.named - before.named,
    kinds,
  };
}
