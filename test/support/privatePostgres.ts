/**
 * A private PostgreSQL cluster (Debian's `pg_createcluster`/`pg_ctlcluster`) for a test that the
 * shared server cannot serve: a fault test restarts it, and the erasure vacuum test needs a server
 * where no other test file holds a snapshot open. Made fresh for the file that uses it and dropped
 * after it (`dropPrivateCluster`), so nothing outlives the suite; runs as root (the tools switch to
 * the cluster owner themselves).
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { basename } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

/**
 * What a cluster is for; a run has at most one cluster per purpose, running side by side: the fault
 * suite's, one per topology (its two projects run in one run), and the erasure vacuum test's.
 */
export type ClusterPurpose = "faults" | "faults-split" | "vacuum";
const PURPOSES: ClusterPurpose[] = ["faults", "faults-split", "vacuum"];

/** This process's cluster: the fault suite's of its topology unless `createPrivateCluster` names another. */
let purpose: ClusterPurpose = process.env.AWAKEN_FAULT_TOPOLOGY === "split" ? "faults-split" : "faults";

/**
 * The cluster's name, one per test run and purpose: the run's scratch dir (`awt-…`, which the
 * global setup puts in TMPDIR for every worker) names it, so two runs on one machine (two
 * checkouts, or a second run started while one goes on) never restart or drop each other's cluster.
 */
export function privateClusterName(of: ClusterPurpose = purpose): string {
  const run = basename(process.env.TMPDIR ?? "");
  const name = run.startsWith("awt-")
    ? `awakenfault_${run.slice(4).replace(/[^A-Za-z0-9]/g, "")}`
    : "awakenfault";
  return of === "faults" ? name : `${name}_${of.replace("faults-", "")}`;
}

/** Every name this run's clusters may have, for the suite's leak check. */
export function privateClusterNames(): string[] {
  return PURPOSES.map((of) => privateClusterName(of));
}

/** The port the cluster listens on: a free one, chosen when it is created. */
let port = 0;
const privateUrl = () => `postgres://postgres@127.0.0.1:${port}/postgres`;

/** A port nothing listens on now (the kernel's choice), for the cluster to take. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const chosen = (probe.address() as { port: number }).port;
      probe.close(() => resolve(chosen));
    });
  });
}

function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "0" && ci.toLowerCase() !== "false";
}

function version(): string | undefined {
  if (!existsSync("/etc/postgresql")) return undefined;
  return readdirSync("/etc/postgresql").sort()[0];
}

function toolsPresent(): boolean {
  return existsSync("/usr/bin/pg_createcluster") && existsSync("/usr/bin/pg_ctlcluster") && !!version();
}

/**
 * Why the private cluster cannot be used here, or null. Outside CI a missing toolchain skips; in CI
 * this returns null and `ensurePrivateCluster` fails with a clear message instead.
 */
export function privateClusterUnavailable(): string | null {
  if (toolsPresent() || inCi()) return null;
  return "pg_createcluster/pg_ctlcluster not available; PostgreSQL restart test skipped (outside CI only)";
}

/** Runs `pg_ctlcluster` without blocking the event loop (streams in this process keep flowing). */
async function ctl(action: "start" | "stop" | "restart"): Promise<void> {
  await promisify(execFile)("pg_ctlcluster", [
    "--skip-systemctl-redirect",
    version()!,
    privateClusterName(),
    action,
  ]);
}

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: privateUrl(), connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Waits until the private cluster answers queries (after a start or restart). */
export async function waitForPrivateCluster(timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await reachable())) {
    if (Date.now() > deadline) throw new Error(`private PostgreSQL on port ${port} did not come up`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether the private cluster (by default this topology's) exists on this host (made and not yet dropped). */
export function privateClusterPresent(name = privateClusterName()): boolean {
  const ver = version();
  return ver !== undefined && existsSync(`/etc/postgresql/${ver}/${name}`);
}

/** Stops and removes the private cluster, its data and its configuration; a no-op when there is none. */
export async function dropPrivateCluster(): Promise<void> {
  if (!toolsPresent() || !privateClusterPresent()) return;
  await promisify(execFile)("pg_dropcluster", ["--stop", version()!, privateClusterName()]);
}

/**
 * Creates and starts the private cluster; returns its `postgres` database URL. A cluster left by a
 * run that was killed before its clean-up is dropped first, so every run starts from initdb.
 */
export async function createPrivateCluster(of: ClusterPurpose = purpose): Promise<string> {
  purpose = of;
  if (!toolsPresent())
    throw new Error(
      "a private PostgreSQL cluster needs Debian's postgresql-common (pg_createcluster, pg_ctlcluster) " +
        "and a server under /etc/postgresql, run as root",
    );
  await dropPrivateCluster();
  port = await freePort();
  execFileSync(
    "pg_createcluster",
    [version()!, privateClusterName(), "-p", String(port), "--", "--auth=trust"],
    {
      stdio: "pipe",
    },
  );
  await ctl("start");
  await waitForPrivateCluster();
  return privateUrl();
}

/** Restarts the private cluster (fast shutdown: every open connection is cut) and waits for it. */
export async function restartPrivateCluster(): Promise<void> {
  await ctl("restart");
  await waitForPrivateCluster();
}
