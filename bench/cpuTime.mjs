// Where a measured window's CPU went, by role: this process (the bench client), the `awaken`
// processes the bench started (servers and workers; with SQLite the database too), PostgreSQL's
// processes (its own cluster's when the bench runs one), and the rest of the machine (other tenants' work, the kernel's own).
// Read from /proc, so Linux only: elsewhere `cpuSnapshot` answers null and the figures are left out.
//
// Why: a whole-turn rate on one small machine is bounded by whichever of these the turn spends the
// most CPU in, and the client's own share bounds what the platform could reach there at all.
import { readdirSync, readFileSync } from "node:fs";

// /proc reports process times in clock ticks of USER_HZ, which Linux fixes at 100 on every
// architecture Node supports (sysconf(_SC_CLK_TCK) is not reachable from Node).
const TICK_MS = 10;

/** utime + stime of one process (all its threads) in ms, or 0 when it is gone. */
function processMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * The PostgreSQL processes counted: with AWAKEN_BENCH_POSTMASTER_PID (set by a bench that runs its
 * own cluster, bench/privateCluster.mjs) that postmaster and its children, so another cluster's
 * work on this machine is not counted; else every process whose command name is `postgres`.
 */
function postgresMs() {
  const postmaster = process.env.AWAKEN_BENCH_POSTMASTER_PID;
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue;
      if (postmaster && entry !== postmaster && parentOf(entry) !== postmaster) continue;
      total += processMs(entry);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** The parent pid of `pid` (field 4 of /proc/PID/stat), as a string. */
function parentOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
}

/** Busy time of all CPUs together (everything but idle and iowait), in ms. */
function machineBusyMs() {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) * TICK_MS;
}

/**
 * The CPU time used so far by each role; `awakenPids` are the processes the bench started. A
 * process that exits inside a window takes its time with it, so the windows are chosen while
 * everything measured is running.
 */
export function cpuSnapshot(awakenPids) {
  try {
    const own = process.cpuUsage();
    return {
      at: performance.now(),
      client: (own.user + own.system) / 1000,
      awakenEach: awakenPids.map(processMs),
      postgres: postgresMs(),
      machine: machineBusyMs(),
    };
  } catch {
    return null;
  }
}

/** CPU ms per role between two snapshots, with "other" for what the machine did besides. */
export function cpuBetween(before, after) {
  if (!before || !after) return null;
  const client = after.client - before.client;
  // Per process, in the order the topology listed them (the server the client talks to first).
  const awakenEach = after.awakenEach.map((ms, i) => ms - (before.awakenEach[i] ?? 0));
  const awaken = awakenEach.reduce((sum, ms) => sum + ms, 0);
  const postgres = after.postgres - before.postgres;
  const machine = after.machine - before.machine;
  return {
    wallMs: after.at - before.at,
    client,
    awaken,
    awakenEach,
    postgres,
    other: Math.max(0, machine - client - awaken - postgres),
    machine,
  };
}
