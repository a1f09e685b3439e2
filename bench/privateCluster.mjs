// A PostgreSQL cluster of the bench's own (Debian's pg_createcluster), so that what PostgreSQL
// spends in a measured window is the measured side's alone: its WAL, its heap writes and the CPU of
// its processes. On the machine's shared server any other client (a test run, another checkout's
// bench) writes WAL and burns backend CPU in the same window, and the figures absorb it.
// Configured as the machine's own cluster is (autovacuum off, loopback only: the default
// listen_addresses); dropped afterwards.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

function version() {
  if (!existsSync("/etc/postgresql")) return undefined;
  return readdirSync("/etc/postgresql").sort()[0];
}

/** Why a private cluster cannot be made here, or null. */
export function privateClusterUnavailable() {
  if (!existsSync("/usr/bin/pg_createcluster") || !version())
    return "Debian's postgresql-common (pg_createcluster) and a server under /etc/postgresql are missing";
  if (process.getuid?.() !== 0)
    return "pg_createcluster needs root (it switches to the cluster owner itself)";
  return null;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function reachable(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
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

/**
 * Creates and starts a cluster named after this process, registers its drop on `scope` and returns
 * its `postgres` database URL and its postmaster's pid (the parent of every process it runs).
 */
export async function startPrivateCluster(scope) {
  const ver = version();
  const name = `awakenbench_${process.pid}`;
  const port = await freePort();
  scope.defer(() => run("pg_dropcluster", ["--stop", ver, name]).catch(() => {}));
  execFileSync("pg_createcluster", [ver, name, "-p", String(port), "-o", "autovacuum=off"], {
    stdio: "pipe",
  });
  // pg_hba: trust on loopback, as the machine's server is configured.
  await run("sh", [
    "-c",
    `sed -i -E 's/(host[[:space:]]+all[[:space:]]+all[[:space:]]+127\\.0\\.0\\.1\\/32[[:space:]]+)[a-z0-9-]+/\\1trust/' /etc/postgresql/${ver}/${name}/pg_hba.conf`,
  ]);
  await run("pg_ctlcluster", ["--skip-systemctl-redirect", ver, name, "start"]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  while (!(await reachable(url))) {
    if (Date.now() > deadline)
      throw new Error(`the bench's PostgreSQL cluster on port ${port} did not come up`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pidFile = `/var/lib/postgresql/${ver}/${name}/postmaster.pid`;
  const postmasterPid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  return { url, postmasterPid };
}
