import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ContainerSandbox, ContainerTierProvider } from "../../src/sandbox/containerTier.js";
import { type ExecRequest, SandboxUnavailableError } from "../../src/sandbox/ports.js";
import { probeLocalSocket } from "../support/localSocketProbe.js";
import {
  buildSandboxImage,
  podmanMissing,
  SANDBOX_IMAGE_MARKER,
  type SandboxImage,
} from "../support/sandboxImage.js";

/**
 * The container tier against real podman (runc) and a test image made here: the bwrap tier's
 * escape probes, run against a container. A host without podman fails this file (CI installs it).
 */

const SYSCALL = process.arch === "arm64" ? { ptrace: 117 } : { ptrace: 101 };

let root: string;
let image: SandboxImage;
let provider: ContainerTierProvider;
let sandbox: ContainerSandbox;

function run(target: ContainerSandbox, argv: string[], overrides: Partial<ExecRequest> = {}) {
  return target.exec({
    argv,
    timeoutMs: 20_000,
    maxOutputBytes: 1_000_000,
    signal: new AbortController().signal,
    ...overrides,
  });
}

beforeAll(async () => {
  const missing = podmanMissing();
  if (missing) throw new Error(`the container tier test needs podman: ${missing}`);
  image = buildSandboxImage();
  root = await mkdtemp(join(tmpdir(), "container-tier-"));
  provider = new ContainerTierProvider({
    workspaceRoot: join(root, "workspaces"),
    allowedImages: [image.reference],
    uidRange: { first: 232_000, last: 232_999 },
    limits: { memoryBytes: 64 * 2 ** 20, processes: 64 },
    poolSize: 0,
  });
  sandbox = await provider.realize({
    tier: "container",
    image: image.reference,
    sessionId: "s-main",
    networking: { type: "limited", allowed_hosts: ["allowed.example"] },
  });
}, 120_000);

afterAll(async () => {
  await provider?.close();
  image?.remove();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("container tier: a session's commands run in the image", () => {
  it("runs in the allowed image, not on the host", async () => {
    const release = await run(sandbox, ["cat", "/etc/os-release"]);
    expect(release.stdout).toContain(`ID=${SANDBOX_IMAGE_MARKER}`);
    const marker = await run(sandbox, ["cat", `/${SANDBOX_IMAGE_MARKER}`]);
    expect(marker.stdout).toBe("baked into the image\n");
  });

  it("keeps /workspace across execs and on the host, owned by the sandbox's uid", async () => {
    const write = await run(sandbox, ["sh", "-c", "pwd && echo hello > note.txt"]);
    expect(write.stdout.trim()).toBe("/workspace");
    expect((await run(sandbox, ["cat", "note.txt"])).stdout).toBe("hello\n");
    expect(await readFile(join(sandbox.hostWorkspace, "note.txt"), "utf8")).toBe("hello\n");
    expect((await stat(join(sandbox.hostWorkspace, "note.txt"))).uid).toBe(sandbox.owner.uid);
  });
});

describe("container tier: escape probes", () => {
  it("runs as an unprivileged uid with no capabilities and no privilege gain", async () => {
    const id = await run(sandbox, ["id", "-u"]);
    expect(id.stdout.trim()).toBe(String(sandbox.owner.uid));
    expect(sandbox.owner.uid).toBeGreaterThanOrEqual(232_000);
    const status = await run(sandbox, ["sh", "-c", "cat /proc/self/status"]);
    expect(status.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(status.stdout).toMatch(/CapBnd:\s+0000000000000000/);
    expect(status.stdout).toMatch(/NoNewPrivs:\s+1/);
  });

  it("cannot read the host's /etc/shadow or /root", async () => {
    expect((await run(sandbox, ["cat", "/etc/shadow"])).exitCode).not.toBe(0);
    expect((await run(sandbox, ["ls", "/root"])).exitCode).not.toBe(0);
  });

  it("mounts no host path but the workspace and the egress socket's directory", async () => {
    const mounts = await run(sandbox, ["cat", "/proc/self/mountinfo"]);
    const points = mounts.stdout
      .trim()
      .split("\n")
      .map((line) => line.split(" ")[4]);
    const hostBinds = points.filter(
      (point) => point !== undefined && !/^\/(proc|sys|dev)(\/|$)/.test(point) && point !== "/",
    );
    // /tmp and /dev/shm are tmpfs; /etc/hosts, /etc/resolv.conf, /etc/hostname and /run/.containerenv
    // are podman's own files, not host paths.
    const unexpected = hostBinds.filter(
      (point) =>
        ![
          "/workspace",
          "/run/awaken-egress",
          "/tmp",
          "/etc/hosts",
          "/etc/hostname",
          "/etc/resolv.conf",
          "/run/.containerenv",
        ].includes(point!),
    );
    expect(unexpected).toEqual([]);
  });

  it("cannot write outside /workspace and /tmp", async () => {
    for (const path of ["/usr/x", "/etc/x", "/x", "/bin/x"]) {
      const result = await run(sandbox, ["touch", path]);
      expect(result.exitCode, path).not.toBe(0);
      expect(result.stderr, path).toMatch(/Read-only file system|Permission denied/);
    }
  });

  it("has no TCP to the host's loopback, nor any route out", async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const loop = await run(sandbox, ["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port}`]);
      expect(loop.exitCode).not.toBe(0);
      expect(connections).toBe(0);
      const out = await run(sandbox, ["bash", "-c", "exec 3<>/dev/tcp/1.1.1.1/80"]);
      expect(out.exitCode).not.toBe(0);
      expect(out.stderr).toMatch(/Network is unreachable/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reaches only the egress proxy, which refuses a host the environment does not allow", async () => {
    const request = "CONNECT refused.example:443 HTTP/1.1\\r\\nHost: refused.example:443\\r\\n\\r\\n";
    const result = await run(sandbox, [
      "bash",
      "-c",
      `exec 3<>/dev/tcp/127.0.0.1/3128 && printf '${request}' >&3 && head -n 1 <&3`,
    ]);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 403/);
  });

  it("gets a clean environment, not the worker's", async () => {
    process.env.AWAKEN_PLANTED_SECRET = "sk-planted-7f3a9c";
    try {
      const result = await run(sandbox, ["env"]);
      expect(result.stdout).not.toContain("sk-planted-7f3a9c");
      expect(result.stdout).toContain("HTTPS_PROXY=http://127.0.0.1:3128\n");
    } finally {
      delete process.env.AWAKEN_PLANTED_SECRET;
    }
  });

  it("refuses ptrace (podman's seccomp profile without CAP_SYS_PTRACE) and new user namespaces", async () => {
    const ptrace = await run(sandbox, [
      "perl",
      "-e",
      `my $r = syscall(${SYSCALL.ptrace}, 0, 0, 0, 0); print "$r ", $!+0`,
    ]);
    expect(ptrace.stdout).toBe("-1 1");
    const userns = await run(sandbox, ["unshare", "-U", "true"]);
    expect(userns.exitCode).not.toBe(0);
    const mount = await run(sandbox, ["mount", "-t", "tmpfs", "x", "/tmp"]);
    expect(mount.exitCode).not.toBe(0);
  });
});

describe("container tier: egress", () => {
  it("lets an allowed host through the egress proxy and refuses another", async () => {
    let hits = 0;
    const upstream: Server = createServer((socket) => {
      hits += 1;
      socket.once("data", () =>
        socket.end("HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nupgoing"),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const port = (upstream.address() as { port: number }).port;
    const refusals: string[] = [];
    const egressing = new ContainerTierProvider({
      workspaceRoot: join(root, "egress"),
      allowedImages: [image.reference],
      uidRange: { first: 234_000, last: 234_999 },
      poolSize: 0,
      // Tests only: the allowed name resolves to this test's server on the host's loopback.
      egress: {
        resolve: async () => [{ address: "127.0.0.1", family: 4 }],
        allowAddress: () => true,
        onRefusal: (refusal) => refusals.push(refusal.host),
      },
    });
    try {
      const session = await egressing.realize({
        tier: "container",
        image: image.reference,
        sessionId: "s-egress",
        networking: { type: "limited", allowed_hosts: ["allowed.example"] },
      });
      const get = (host: string) =>
        run(session, [
          "bash",
          "-c",
          `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'GET http://${host}:${port}/ HTTP/1.1\\r\\nHost: ${host}:${port}\\r\\nConnection: close\\r\\n\\r\\n' >&3 && cat <&3`,
        ]);
      const allowed = await get("allowed.example");
      expect(allowed.stdout).toMatch(/^HTTP\/1\.1 200/);
      expect(allowed.stdout).toContain("upgoing");
      expect(hits).toBe(1);
      const refused = await get("refused.example");
      expect(refused.stdout).toMatch(/^HTTP\/1\.1 403/);
      expect(hits).toBe(1);
      expect(refusals).toContain("refused.example");

      // A long-lived process with egress (a harness reaching its model) goes through a relay of
      // its own to the same proxy; one without has no route at all.
      const spawned = async (egress: boolean) => {
        const child = await session.spawn({
          argv: [
            "bash",
            "-c",
            `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'GET http://allowed.example:${port}/ HTTP/1.1\\r\\nHost: allowed.example\\r\\nConnection: close\\r\\n\\r\\n' >&3 && cat <&3`,
          ],
          env: {},
          maxStderrBytes: 4_096,
          signal: new AbortController().signal,
          egress,
        });
        const chunks: Buffer[] = [];
        child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
        return { code: await child.exited, out: Buffer.concat(chunks).toString("utf8") };
      };
      const relayed = await spawned(true);
      expect(relayed.out).toContain("upgoing");
      expect(hits).toBe(2);
      const isolated = await spawned(false);
      expect(isolated.code).not.toBe(0);
      expect(hits).toBe(2);
    } finally {
      await egressing.close();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});

describe("container tier: long-lived processes", () => {
  it("runs a stdio process in a container of its own, its variables never on a command line", async () => {
    const secret = `sk-spawned-${Date.now()}`;
    const child = await sandbox.spawn({
      argv: ["bash", "-c", 'echo "got $GREETING in $PWD as $(id -u)"; read line; echo "echo $line"'],
      env: { GREETING: secret },
      maxStderrBytes: 4_096,
      signal: new AbortController().signal,
    });
    const lines: string[] = [];
    let buffered = "";
    const firstLine = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        lines.push(...buffered.split("\n").slice(0, -1));
        buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
        if (lines.length > 0) resolve();
      });
    });
    await firstLine;
    expect(lines[0]).toBe(`got ${secret} in /workspace as ${sandbox.owner.uid}`);
    const cmdlines = spawnSync("sh", ["-c", "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"], {
      encoding: "utf8",
      maxBuffer: 64 * 2 ** 20,
    }).stdout;
    expect(cmdlines).not.toContain(secret);
    child.stdin.write("ping\n");
    expect(await child.exited).toBe(0);
    expect(lines.join("\n") + buffered).toContain("echo ping");
    await child.kill();
  });
});

describe("container tier: a socket its processes reach (serveLocal)", () => {
  it("a process spawned with egress talks to the host server over its stdio bridge (the image's perl); the socket is the sandbox uid's alone", async () => {
    const probe = await probeLocalSocket(sandbox);
    try {
      expect(await probe.roundTrip(true)).toEqual({ code: 0, out: "host heard ping\n" });
      expect(probe.socketStat()).toEqual({ mode: 0o600, uid: sandbox.owner.uid });
    } finally {
      await probe.close();
    }
  });
});

describe("container tier: limits", () => {
  it("bounds memory by the container's cgroup: a process over it is killed, the sandbox lives on", async () => {
    const big = await run(sandbox, ["perl", "-e", "my $x = 'a' x (200 * 1024 * 1024); print 'allocated'"]);
    expect(big.stdout).not.toContain("allocated");
    expect(big.exitCode).not.toBe(0);
    expect(big.limitHit).toMatch(/the sandbox's memory limit \(64 MiB\) was reached/);
    expect((await run(sandbox, ["echo", "still here"])).stdout).toBe("still here\n");
  });

  it("stops a command that goes over the workspace's disk quota, and says so", async () => {
    const quoted = new ContainerTierProvider({
      workspaceRoot: join(root, "quota"),
      allowedImages: [image.reference],
      uidRange: { first: 235_000, last: 235_999 },
      poolSize: 0,
      limits: { workspaceBytes: 8 * 2 ** 20 },
      quotaPollMs: 50,
    });
    try {
      const session = await quoted.realize({
        tier: "container",
        image: image.reference,
        sessionId: "s-quota",
        networking: { type: "unrestricted" },
      });
      const over = await run(session, ["bash", "-c", "head -c 20000000 /dev/zero > big; sleep 30"]);
      expect(over.limitHit).toMatch(/the workspace's disk quota \(8 MiB\) was exceeded/);
    } finally {
      await quoted.close();
    }
  });

  it("bounds a fork bomb by the pids limit, and the sandbox works afterwards", async () => {
    const bomb = await run(sandbox, ["bash", "-c", ":(){ :|:& };: ; sleep 100"], { timeoutMs: 3_000 });
    expect(bomb.timedOut).toBe(true);
    expect(bomb.stderr).toMatch(/fork: .*Resource temporarily unavailable/);
    expect((await run(sandbox, ["echo", "still here"])).stdout).toBe("still here\n");
  });
});

describe("container tier: admission", () => {
  it("refuses an image that is not on the worker's allow-list, and a malformed reference", async () => {
    for (const reference of ["localhost/other:1", "--privileged", "a b"]) {
      await expect(
        provider.realize({
          tier: "container",
          image: reference,
          sessionId: "s-refused",
          networking: { type: "unrestricted" },
        }),
      ).rejects.toBeInstanceOf(SandboxUnavailableError);
    }
  });

  it("refuses with SandboxUnavailableError when podman is not installed", async () => {
    const without = new ContainerTierProvider({
      workspaceRoot: join(root, "without"),
      allowedImages: [image.reference],
      host: { podmanPath: "/nonexistent/podman" },
    });
    try {
      const error = await without
        .realize({
          tier: "container",
          image: image.reference,
          sessionId: "s-x",
          networking: { type: "unrestricted" },
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toMatch(/podman/);
    } finally {
      await without.close();
    }
  });

  it("destroy removes the container and the workspace", async () => {
    const other = await provider.realize({
      tier: "container",
      image: image.reference,
      sessionId: "s-destroy",
      networking: { type: "unrestricted" },
    });
    await run(other, ["touch", "x"]);
    await provider.destroy("s-destroy");
    await expect(stat(other.hostWorkspace)).rejects.toThrow();
    const left = spawnSync("podman", ["ps", "--all", "--quiet", "--filter", `ancestor=${image.reference}`], {
      encoding: "utf8",
    }).stdout.trim();
    // Only s-main's container remains.
    expect(left.split("\n").filter(Boolean)).toHaveLength(1);
  });
});

describe("container tier: warm pool", () => {
  it("hands a pre-started container to a new session, its slot becoming the workspace, and refills", async () => {
    const pooling = new ContainerTierProvider({
      workspaceRoot: join(root, "pooled"),
      allowedImages: [image.reference],
      uidRange: { first: 233_000, last: 233_999 },
      poolSize: 1,
    });
    try {
      await pooling.warm(image.reference);
      expect(pooling.pooled(image.reference)).toBe(1);
      const session = await pooling.realize({
        tier: "container",
        image: image.reference,
        sessionId: "s-pooled",
        networking: { type: "unrestricted" },
      });
      // Taken from the pool: no container start on the session's path.
      expect(pooling.pooled(image.reference)).toBe(0);
      await run(session, ["sh", "-c", "echo mine > mine.txt"]);
      expect(await readFile(join(session.hostWorkspace, "mine.txt"), "utf8")).toBe("mine\n");
      expect((await run(session, ["cat", "/etc/os-release"])).stdout).toContain(SANDBOX_IMAGE_MARKER);
      await pooling.warm(image.reference);
      expect(pooling.pooled(image.reference)).toBe(1);
    } finally {
      await pooling.close();
    }
    const left = spawnSync("podman", ["ps", "--all", "--quiet", "--filter", `ancestor=${image.reference}`], {
      encoding: "utf8",
    }).stdout.trim();
    expect(left.split("\n").filter(Boolean)).toHaveLength(1);
  });
});
