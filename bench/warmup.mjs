// How many untimed runs every bench drives before its clock starts, the same for the platform and
// for its peers so each side is measured warm.

/**
 * Untimed runs (turns) before the timed ones: JIT, connections, caches. A few dozen were not
 * enough: a server or the embedded runtime runs far more of its own code per turn than DBOS or the
 * raw floor, its first few hundred turns are still being optimised, and a short timed loop then
 * measured warm-up rather than the runtime (CPU per run about twice the steady state's).
 */
export const warmupRuns = (concurrency) => Math.max(300, 2 * concurrency);
