import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BwrapSandbox, BwrapTierProvider } from "../../src/sandbox/bwrapTier.js";
import { NoneTierProvider } from "../../src/sandbox/noneTier.js";
import type { Sandbox, SandboxProcess, SandboxProvider } from "../../src/sandbox/ports.js";
import { workspaceDirectory } from "../../src/sandbox/workspaces.js";
import { probeLocalSocket } from "../support/localSocketProbe.js";

/**
 * Long-lived processes of a sandbox (what a stdio MCP server runs as), against real bubblewrap
 * and real processes: their variables reach them and no command line on the host, their argv is
 * never read as options, their stdin/stdout are the caller's, and they die with the sandbox.
 */

const SECRET = `spawn-secret-${Math.random().toString(36).slice(2)}`;

let root: string;
const providers: SandboxProvider[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sandbox-spawn-"));
});
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await rm(root, { recursive: true, force: true });
});

async function realize(
  tier: "bwrap" | "none",
  sessionId: string,
): Promise<{ provider: SandboxProvider; sandbox: Sandbox }> {
  const provider =
    tier === "bwrap"
      ? new BwrapTierProvider({
          workspaceRoot: join(root, tier),
          uidRange: { first: 232_000, last: 232_099 },
          poolSize: 0,
        })
      : new NoneTierProvider(join(root, tier));
  providers.push(provider);
  const sandbox = await provider.realize({ tier, sessionId, networking: { type: "unrestricted" } });
  return { provider, sandbox };
}

function spawnIn(sandbox: Sandbox, argv: string[], env: Record<string, string> = {}) {
  return sandbox.spawn({ argv, env, maxStderrBytes: 64, signal: new AbortController().signal });
}

/** Reads stdout until `until` matches what came so far. */
function readUntil(process: SandboxProcess, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`no match; got ${JSON.stringify(seen)}`)), 10_000);
    process.stdout.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      if (until.test(seen)) {
        clearTimeout(timer);
        resolve(seen);
      }
    });
  });
}

function commandLinesHolding(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text)) found.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

describe.each(["bwrap", "none"] as const)("a long-lived process on the %s tier", (tier) => {
  it("gets its variables (never on a host command line) and talks over its own stdin and stdout", async () => {
    const { sandbox } = await realize(tier, `sess_spawn_env_${tier}`);
    const marker = `spawn-echo-${tier}-${Math.random().toString(36).slice(2)}`;
    const process = await spawnIn(
      sandbox,
      [
        "bash",
        "-c",
        'echo "token=$TOKEN plain=$PLAIN"; while read -r line; do echo "got $line"; done',
        marker,
      ],
      { TOKEN: SECRET, PLAIN: "a b\nc" },
    );
    const first = await readUntil(process, /plain=a b\nc\n/);
    expect(first).toBe(`token=${SECRET} plain=a b\nc\n`);
    expect(commandLinesHolding(marker).length).toBeGreaterThan(0);
    expect(commandLinesHolding(SECRET)).toEqual([]);
    const echoed = readUntil(process, /got ping\n/);
    process.stdin.write("ping\n");
    expect(await echoed).toContain("got ping");
    await process.kill();
    // Killed: by a signal (none), or bwrap's report of its killed child (128 + SIGKILL).
    expect([null, 137]).toContain(await process.exited);
    expect(commandLinesHolding(marker)).toEqual([]);
  });

  it("an argv that looks like options is run as a program name, never read as one", async () => {
    const { sandbox } = await realize(tier, `sess_spawn_opt_${tier}`);
    const process = await spawnIn(sandbox, ["--bind", "/", "/host"]);
    expect(await process.exited).not.toBe(0);
    expect(process.stderrTail()).toMatch(/not found|No such file|--bind/);
  });

  it("keeps only the end of its stderr", async () => {
    const { sandbox } = await realize(tier, `sess_spawn_err_${tier}`);
    const process = await spawnIn(sandbox, [
      "bash",
      "-c",
      "head -c 5000 /dev/zero | tr '\\0' x >&2; echo END >&2",
    ]);
    await process.exited;
    const tail = process.stderrTail();
    expect(tail.length).toBe(64);
    expect(tail.endsWith("xEND\n")).toBe(true);
  });

  it("no startup file the workspace holds runs: a planted .bashrc, .profile, .bash_profile and BASH_ENV never see its secret", async () => {
    const sessionId = `sess_spawn_rc_${tier}`;
    const { sandbox } = await realize(tier, sessionId);
    // The workspace as the process sees it, and as the host does (to plant and check).
    const inside = sandbox.workspacePath;
    const host = workspaceDirectory(join(root, tier), sessionId);
    const hook = `exec() { env > ${inside}/stolen.txt; builtin exec "$@"; }\n`;
    const files = [".bashrc", ".profile", ".bash_profile", ".bash_env"];
    for (const file of files) writeFileSync(join(host, file), `touch ${inside}/sourced${file}\n${hook}`);
    // A worker started with BASH_ENV and ENV set must not hand them on either.
    const saved = { BASH_ENV: globalThis.process.env.BASH_ENV, ENV: globalThis.process.env.ENV };
    globalThis.process.env.BASH_ENV = join(host, ".bash_env");
    globalThis.process.env.ENV = join(host, ".bash_env");
    let spawned: SandboxProcess;
    try {
      // Its own shell, as a server written in bash is: it too must find no planted file.
      spawned = await spawnIn(sandbox, ["bash", "-c", 'echo "home=$HOME token=$TOKEN"', "server"], {
        TOKEN: SECRET,
      });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete globalThis.process.env[name];
        else globalThis.process.env[name] = value;
      }
    }
    const out = await readUntil(spawned, /token=.*\n/);
    expect(await spawned.exited).toBe(0);
    // It got its variables, and a HOME that is not the workspace the commands write.
    expect(out).toMatch(new RegExp(`^home=(\\S+) token=${SECRET}\n$`));
    expect(out.split(" ")[0]).not.toBe(`home=${inside}`);
    expect(spawned.stderrTail()).toBe("");
    expect(existsSync(join(host, "stolen.txt"))).toBe(false);
    for (const file of files) expect(existsSync(join(host, `sourced${file}`)), file).toBe(false);
  });

  it("dies with the sandbox when the session's sandbox is destroyed", async () => {
    const sessionId = `sess_spawn_destroy_${tier}`;
    const { provider, sandbox } = await realize(tier, sessionId);
    const marker = `spawn-destroy-${tier}-${Math.random().toString(36).slice(2)}`;
    // A child of its own, named by a duration no other process has.
    const sleeper = `100.${Math.floor(Math.random() * 1e9)}`;
    const process = await spawnIn(sandbox, ["bash", "-c", `sleep ${sleeper} & echo up; wait`, marker]);
    // "up" is written once the child is forked: from then on both are on the host's process list
    // (a command line reads empty only while its process is inside an exec, so poll briefly).
    await readUntil(process, /up\n/);
    for (let i = 0; i < 200 && commandLinesHolding(sleeper).length === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(commandLinesHolding(sleeper), process.stderrTail()).not.toEqual([]);
    expect(commandLinesHolding(marker), process.stderrTail()).not.toEqual([]);
    await provider.destroy(sessionId);
    await process.exited;
    // bwrap's PID namespace takes the whole tree down; the none tier kills the process group.
    for (let i = 0; i < 200 && commandLinesHolding(sleeper).length > 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(commandLinesHolding(marker)).toEqual([]);
    expect(commandLinesHolding(sleeper)).toEqual([]);
  });
});

describe("long-lived processes of several sessions on the none tier", () => {
  it("destroying one session waits for its own processes only, while another session's still runs", async () => {
    const provider = new NoneTierProvider(join(root, "none-sessions"));
    providers.push(provider);
    const started: SandboxProcess[] = [];
    for (const sessionId of ["sess_spawn_one", "sess_spawn_other"]) {
      const sandbox = await provider.realize({
        tier: "none",
        sessionId,
        networking: { type: "unrestricted" },
      });
      const process = await spawnIn(sandbox, ["bash", "-c", "echo up; exec sleep 300"]);
      await readUntil(process, /up\n/);
      started.push(process);
    }
    const [mine, other] = started as [SandboxProcess, SandboxProcess];
    let otherExited = false;
    void other.exited.then(() => {
      otherExited = true;
    });
    // A session's deletion (or its erasure) must not wait for as long as another session lives.
    const hung = new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 5_000).unref());
    const outcome = await Promise.race([
      provider.destroy("sess_spawn_one").then(() => "done" as const),
      hung,
    ]);
    expect(outcome).toBe("done");
    expect(await mine.exited).toBeNull();
    expect(otherExited).toBe(false);
    await provider.destroy("sess_spawn_other");
    expect(otherExited).toBe(true);
  });
});

describe("a long-lived process's network on the bwrap tier", () => {
  it("with egress it reaches a host the policy allows through the sandbox's proxy (and no other); without, nothing", async () => {
    const upstream = createServer((_req, res) => res.end("upstream answered"));
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const port = (upstream.address() as AddressInfo).port;
    const refused: string[] = [];
    const provider = new BwrapTierProvider({
      workspaceRoot: join(root, "bwrap-egress"),
      uidRange: { first: 232_100, last: 232_199 },
      poolSize: 0,
      egress: {
        resolve: async (host) => (host.endsWith(".test") ? [{ address: "127.0.0.1", family: 4 }] : []),
        allowAddress: (address) => address === "127.0.0.1",
        onRefusal: (refusal) => refused.push(refusal.host),
      },
    });
    providers.push(provider);
    try {
      const sandbox = await provider.realize({
        tier: "bwrap",
        sessionId: "sess_spawn_egress",
        networking: { type: "limited", allowed_hosts: ["allowed.test"] },
      });
      const fetchOnce = async (host: string, egress: boolean) => {
        const process = await sandbox.spawn({
          argv: ["curl", "-sS", "-m", "5", `http://${host}:${port}/`],
          env: {},
          maxStderrBytes: 512,
          signal: new AbortController().signal,
          egress,
        });
        const chunks: Buffer[] = [];
        process.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
        const code = await process.exited;
        return { code, out: Buffer.concat(chunks).toString("utf8"), err: process.stderrTail() };
      };
      expect(await fetchOnce("allowed.test", true)).toMatchObject({ code: 0, out: "upstream answered" });
      // The proxy's policy holds for it as for commands: another host is refused with a 403.
      const other = await fetchOnce("other.test", true);
      expect(other.out).toContain("not in the environment's allowed_hosts");
      expect(refused).toEqual(["other.test"]);
      // Without egress there is no proxy and no route: the name does not even resolve.
      const isolated = await fetchOnce("allowed.test", false);
      expect(isolated.code).not.toBe(0);
      expect(isolated.out).toBe("");
    } finally {
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});

describe("a socket the bwrap sandbox's processes reach (serveLocal)", () => {
  it("a process spawned with egress talks to the host server over its stdio bridge; one without cannot; the socket is the sandbox uid's alone", async () => {
    const { sandbox } = await realize("bwrap", "sess_spawn_local");
    const probe = await probeLocalSocket(sandbox);
    try {
      expect(await probe.roundTrip(true)).toEqual({ code: 0, out: "host heard ping\n" });
      // Without egress the private directory is not bound: the bridge finds no socket.
      const isolated = await probe.roundTrip(false);
      expect(isolated.code).not.toBe(0);
      expect(isolated.out).toBe("");
      expect(probe.socketStat()).toEqual({
        mode: 0o600,
        uid: (sandbox as BwrapSandbox).owner?.uid ?? process.getuid?.(),
      });
      // Names are plain, and never the proxy's own socket.
      for (const name of ["../escape.sock", "proxy.sock", "Tools.sock", "a b.sock"])
        await expect(sandbox.serveLocal!(name, createNetServer())).rejects.toThrow(/not a local socket name/);
    } finally {
      await probe.close();
    }
  });
});
