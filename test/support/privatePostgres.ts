/**
 * A private PostgreSQL cluster (Debian's `pg_createcluster`/`pg_ctlcluster`) that a fault test may
 * restart without touching the shared server other test files use. Made fresh for the file that uses
 * it and dropped after it (`dropPrivateCluster`), so nothing outlives the suite; runs as root (the
 * tools switch to the cluster owner themselves).
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { promisify } from "node:util";
import pg from "pg";

export const PRIVATE_CLUSTER = "awakenfault";
export const PRIVATE_PORT = 5439;
export const PRIVATE_URL = `postgres://postgres@127.0.0.1:${PRIVATE_PORT}/postgres`;

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
    PRIVATE_CLUSTER,
    action,
  ]);
}

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PRIVATE_URL, connectionTimeoutMillis: 1000 });
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
    if (Date.now() > deadline) throw new Error(`private PostgreSQL on port ${PRIVATE_PORT} did not come up`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether the private cluster exists on this host (made and not yet dropped). */
export function privateClusterPresent(): boolean {
  const ver = version();
  return ver !== undefined && existsSync(`/etc/postgresql/${ver}/${PRIVATE_CLUSTER}`);
}

/** Stops and removes the private cluster, its data and its configuration; a no-op when there is none. */
export async function dropPrivateCluster(): Promise<void> {
  if (!toolsPresent() || !privateClusterPresent()) return;
  await promisify(execFile)("pg_dropcluster", ["--stop", version()!, PRIVATE_CLUSTER]);
}

/**
 * Creates and starts the private cluster; returns its `postgres` database URL. A cluster left by a
 * run that was killed before its clean-up is dropped first, so every run starts from initdb.
 */
export async function createPrivateCluster(): Promise<string> {
  if (!toolsPresent())
    throw new Error(
      "the PostgreSQL restart test needs Debian's postgresql-common (pg_createcluster, pg_ctlcluster) " +
        "and a server under /etc/postgresql, run as root",
    );
  await dropPrivateCluster();
  execFileSync(
    "pg_createcluster",
    [version()!, PRIVATE_CLUSTER, "-p", String(PRIVATE_PORT), "--", "--auth=trust"],
    {
      stdio: "pipe",
    },
  );
  await ctl("start");
  await waitForPrivateCluster();
  return PRIVATE_URL;
}

/** Restarts the private cluster (fast shutdown: every open connection is cut) and waits for it. */
export async function restartPrivateCluster(): Promise<void> {
  await ctl("restart");
  await waitForPrivateCluster();
}
