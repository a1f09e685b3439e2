/**
 * Debian's `docker-registry` (CNCF distribution) on a loopback port with its storage in a temp dir,
 * for the image-build tests. `stop` ends the process and removes the storage.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface LoopbackRegistry {
  /** `127.0.0.1:<port>` */
  address: string;
  port: number;
  stop(): Promise<void>;
}

export function dockerRegistryMissing(): string | null {
  const result = spawnSync("sh", [
    "-c",
    "command -v docker-registry && command -v buildah && command -v skopeo",
  ]);
  return result.status === 0
    ? null
    : "docker-registry, buildah or skopeo is not installed (apt-get install docker-registry buildah skopeo; .ci/run does it)";
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `port`: listen there (a registry restarted where its clients know it). */
export async function startDockerRegistry(options: { port?: number } = {}): Promise<LoopbackRegistry> {
  const dir = mkdtempSync(join(tmpdir(), "awaken-registry-"));
  const port = options.port ?? (await freePort());
  const config = join(dir, "config.yml");
  writeFileSync(
    config,
    `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, "storage")}\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  const child: ChildProcess = spawn("docker-registry", ["serve", config], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr?.on("data", (c) => {
    log += c;
  });
  const address = `127.0.0.1:${port}`;
  // Ready once /v2/ answers.
  for (let attempt = 0; ; attempt++) {
    const ok = await fetch(`http://${address}/v2/`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (attempt > 100 || child.exitCode !== null) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`docker-registry did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address,
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
