/**
 * The client side of ACP an ACP Brain's harness calls (its file reads and writes, its terminals)
 * against real sandboxes: bubblewrap when the host has it, and the `none` tier. Everything runs in
 * the sandbox; these tests check it stays in the workspace and that terminals die when told.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HarnessClientServices } from "../../src/runtime/acp/harnessClientServices.js";
import { BwrapTierProvider, bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import { NoneTierProvider } from "../../src/sandbox/noneTier.js";
import type { Sandbox, SandboxProvider } from "../../src/sandbox/ports.js";

const hasBwrap = await bwrapAvailable();
const INVALID_PARAMS = -32602;
const NOT_FOUND = -32002;
const sessionId = "acp_sess";

/** Processes on the host whose command line holds `marker` (bwrap's PID namespace is visible from here). */
function processesHolding(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** A `sleep` whose argument is unique to this test, so its process can be found. */
function uniqueSleep(): string {
  return `${1000 + Math.floor(Math.random() * 1_000_000)}.25`;
}

/**
 * Polls `check` for up to 5 s. A bwrap process's tree is torn down by its PID namespace: on a loaded
 * host its last processes can outlive the `kill()` that started the teardown by a moment.
 */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 50; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never: ${what}`);
}

describe.each([
  { tier: "none" as const, skip: false },
  { tier: "bwrap" as const, skip: !hasBwrap },
])("ACP client services in the $tier tier", ({ tier, skip }) => {
  let root: string;
  let provider: SandboxProvider;
  let sandbox: Sandbox;
  let sessions = 0;
  const open: HarnessClientServices[] = [];

  beforeAll(async () => {
    if (skip) return;
    root = await mkdtemp(join(tmpdir(), `acp-services-${tier}-`));
    provider =
      tier === "none"
        ? new NoneTierProvider(join(root, "workspaces"))
        : new BwrapTierProvider({
            workspaceRoot: join(root, "workspaces"),
            uidRange: { first: 239_000, last: 239_099 },
            poolSize: 0,
          });
  });
  afterAll(async () => {
    if (skip) return;
    await Promise.all(open.map((services) => services.close()));
    await provider.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A fresh session's sandbox and services for each test. */
  async function fresh(
    options: { maxFileBytes?: number; maxOutputBytes?: number; maxTerminals?: number } = {},
  ) {
    sessions += 1;
    sandbox = await provider.realize({
      tier,
      sessionId: `s${sessions}`,
      networking: { type: "unrestricted" },
    });
    const services = new HarnessClientServices(sandbox, { signal: new AbortController().signal, ...options });
    open.push(services);
    return { services, ws: sandbox.workspacePath };
  }

  async function sh(script: string): Promise<string> {
    const result = await sandbox.exec({
      argv: ["bash", "-c", script],
      timeoutMs: 10_000,
      maxOutputBytes: 10_000,
      signal: new AbortController().signal,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    return result.stdout;
  }

  it.skipIf(skip)("writes and reads back a file exactly, creating parent directories", async () => {
    const { services, ws } = await fresh();
    const content = "first line\nsecond — ünïcode ✓\nno newline at the end";
    await expect(
      services.writeTextFile({ sessionId, path: `${ws}/src/deep/a.txt`, content }),
    ).resolves.toEqual({});
    expect(await sh("cat src/deep/a.txt")).toBe(content);
    expect(await services.readTextFile({ sessionId, path: `${ws}/src/deep/a.txt` })).toEqual({ content });
    // An empty file, and the path written the harness's way (`./`, `//`).
    await services.writeTextFile({ sessionId, path: `${ws}/./src//empty.txt`, content: "" });
    expect((await services.readTextFile({ sessionId, path: `${ws}/src/empty.txt` })).content).toBe("");
  });

  it.skipIf(skip)("honours line (1-based) and limit", async () => {
    const { services, ws } = await fresh();
    await sh("seq 1 10 > n.txt");
    const read = (line?: number | null, limit?: number | null) =>
      services.readTextFile({ sessionId, path: `${ws}/n.txt`, line, limit }).then((r) => r.content);
    expect(await read(3, 2)).toBe("3\n4\n");
    expect(await read(9)).toBe("9\n10\n");
    expect(await read(null, 1)).toBe("1\n");
    expect(await read(11, 5)).toBe("");
    for (const bad of [0, -1, 1.5, 2 ** 40]) {
      await expect(read(bad)).rejects.toMatchObject({ code: INVALID_PARAMS });
      await expect(read(1, bad)).rejects.toMatchObject({ code: INVALID_PARAMS });
    }
  });

  it.skipIf(skip)("bounds what a read returns and a write takes", async () => {
    const { services, ws } = await fresh({ maxFileBytes: 64 });
    await sh("seq 1 100 > big.txt");
    await expect(services.readTextFile({ sessionId, path: `${ws}/big.txt` })).rejects.toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining("read it in parts with line and limit"),
    });
    expect(
      (await services.readTextFile({ sessionId, path: `${ws}/big.txt`, line: 50, limit: 3 })).content,
    ).toBe("50\n51\n52\n");
    await expect(
      services.writeTextFile({ sessionId, path: `${ws}/w.txt`, content: "x".repeat(65) }),
    ).rejects.toMatchObject({ code: INVALID_PARAMS });
    await expect(
      services.writeTextFile({ sessionId, path: `${ws}/w.txt`, content: "x".repeat(64) }),
    ).resolves.toEqual({});
  });

  it.skipIf(skip)(
    "refuses paths outside the workspace, relative paths, NUL bytes and non-files",
    async () => {
      const { services, ws } = await fresh();
      await sh("echo secret-ish > inside.txt && mkdir d && mkfifo pipe");
      const refusedRead = async (path: unknown, code = INVALID_PARAMS) =>
        expect(services.readTextFile({ sessionId, path } as never)).rejects.toMatchObject({ code });
      await refusedRead(`${ws}/../${ws.split("/").pop()}-other/x`);
      await refusedRead(`${ws}/d/../../etc/passwd`);
      await refusedRead("/etc/passwd");
      await refusedRead("inside.txt");
      await refusedRead(`${ws}/inside.txt\0.png`);
      await refusedRead(`${ws}/inside.txt\n`);
      await refusedRead(42);
      await refusedRead(`${ws}/d`);
      await refusedRead(`${ws}/pipe`);
      await refusedRead(`${ws}/missing.txt`, NOT_FOUND);
      await expect(
        services.writeTextFile({ sessionId, path: "/tmp/escaped.txt", content: "x" }),
      ).rejects.toMatchObject({ code: INVALID_PARAMS });
      await expect(
        services.writeTextFile({ sessionId, path: `${ws}/../escaped.txt`, content: "x" }),
      ).rejects.toMatchObject({ code: INVALID_PARAMS });
      await expect(
        services.writeTextFile({ sessionId, path: `${ws}/d`, content: "x" }),
      ).rejects.toMatchObject({
        code: INVALID_PARAMS,
      });
      expect(await sh("ls ..; ls /tmp")).not.toContain("escaped.txt");
    },
  );

  it.skipIf(skip)("resolves symbolic links inside the sandbox and refuses one that leads out", async () => {
    const { services, ws } = await fresh();
    await sh(
      "ln -s /etc/passwd passwd-link && ln -s /etc etc-link && ln -s /tmp/out.txt out-link && " +
        "echo ok > real.txt && ln -s real.txt good-link && ln -s loop-b loop-a && ln -s loop-a loop-b",
    );
    for (const path of [`${ws}/passwd-link`, `${ws}/etc-link/passwd`, `${ws}/loop-a`]) {
      await expect(services.readTextFile({ sessionId, path })).rejects.toMatchObject({
        code: INVALID_PARAMS,
      });
    }
    await expect(services.readTextFile({ sessionId, path: `${ws}/passwd-link` })).rejects.toThrow(
      /resolves outside the workspace/,
    );
    for (const path of [`${ws}/out-link`, `${ws}/etc-link/awaken-acp-test`]) {
      await expect(services.writeTextFile({ sessionId, path, content: "x" })).rejects.toMatchObject({
        code: INVALID_PARAMS,
      });
    }
    expect(await sh("ls /tmp /etc")).not.toMatch(/out\.txt|awaken-acp-test/);
    // A link that stays inside is followed; writing through it keeps it a link.
    expect((await services.readTextFile({ sessionId, path: `${ws}/good-link` })).content).toBe("ok\n");
    await services.writeTextFile({ sessionId, path: `${ws}/good-link`, content: "new\n" });
    expect(await sh("cat real.txt; test -L good-link && echo still-a-link")).toBe("new\nstill-a-link\n");
  });

  it.skipIf(skip)(
    "runs a terminal's argv as given, in its cwd, with its env, stdout and stderr together",
    async () => {
      const { services, ws } = await fresh();
      await sh("mkdir sub");
      const { terminalId } = await services.createTerminal({
        sessionId,
        command: "bash",
        args: [
          "-c",
          'echo "out $PWD $GREETING"; echo err >&2; printf "%s|" "$@"; exit 3',
          "name",
          "$(id)",
          "a;b c",
        ],
        cwd: `${ws}/sub`,
        env: [{ name: "GREETING", value: "hi there" }],
      });
      const exit = await services.waitForTerminalExit({ sessionId, terminalId });
      expect(exit).toEqual({ exitCode: 3, signal: null });
      const output = await services.terminalOutput({ sessionId, terminalId });
      expect(output.output).toBe(`out ${ws}/sub hi there\nerr\n$(id)|a;b c|`);
      expect(output.truncated).toBe(false);
      expect(output.exitStatus).toEqual({ exitCode: 3, signal: null });
      // A program name is never a builtin or a shell string.
      const notFound = await services.createTerminal({ sessionId, command: "echo hi; id" });
      expect(
        await services.waitForTerminalExit({ sessionId, terminalId: notFound.terminalId }),
      ).toMatchObject({
        exitCode: 127,
      });
      await services.releaseTerminal({ sessionId, terminalId });
      await services.releaseTerminal({ sessionId, terminalId: notFound.terminalId });
    },
  );

  it.skipIf(skip)("refuses a terminal cwd outside the workspace and bad env entries", async () => {
    const { services, ws } = await fresh();
    await sh("ln -s /etc etc-link && touch file");
    for (const cwd of ["/etc", `${ws}/..`, `${ws}/etc-link`, `${ws}/file`, `${ws}/missing`, "sub"]) {
      await expect(services.createTerminal({ sessionId, command: "true", cwd })).rejects.toMatchObject({
        code: INVALID_PARAMS,
      });
    }
    for (const env of [
      [{ name: "BAD NAME", value: "x" }],
      [{ name: "X", value: "a\0b" }],
      [{ name: "BASH_FUNC_x%%", value: "() { id; }" }],
      [{ name: "X", value: 1 }],
    ]) {
      await expect(
        services.createTerminal({ sessionId, command: "true", env: env as never }),
      ).rejects.toMatchObject({ code: INVALID_PARAMS });
    }
    await expect(services.createTerminal({ sessionId, command: "" })).rejects.toMatchObject({
      code: INVALID_PARAMS,
    });
    await expect(
      services.createTerminal({ sessionId, command: "true", args: ["a\0b"] }),
    ).rejects.toMatchObject({
      code: INVALID_PARAMS,
    });
    // The harness's PATH is the command's, not the launcher's.
    const { terminalId } = await services.createTerminal({
      sessionId,
      command: "/usr/bin/env",
      env: [{ name: "PATH", value: "/nowhere" }],
    });
    expect(await services.waitForTerminalExit({ sessionId, terminalId })).toEqual({
      exitCode: 0,
      signal: null,
    });
    expect((await services.terminalOutput({ sessionId, terminalId })).output).toContain("PATH=/nowhere");
  });

  it.skipIf(skip)(
    "keeps the tail of the output within outputByteLimit and says it was truncated",
    async () => {
      const { services } = await fresh({ maxOutputBytes: 1000 });
      const { terminalId } = await services.createTerminal({
        sessionId,
        command: "seq",
        args: ["1", "20000"],
        outputByteLimit: 100,
      });
      await services.waitForTerminalExit({ sessionId, terminalId });
      const { output, truncated } = await services.terminalOutput({ sessionId, terminalId });
      expect(truncated).toBe(true);
      expect(Buffer.byteLength(output)).toBeLessThanOrEqual(100);
      expect(output.endsWith("19999\n20000\n")).toBe(true);
      // Past the services' own bound, its bound wins.
      const big = await services.createTerminal({
        sessionId,
        command: "seq",
        args: ["1", "20000"],
        outputByteLimit: 10 ** 9,
      });
      await services.waitForTerminalExit({ sessionId, terminalId: big.terminalId });
      const bounded = await services.terminalOutput({ sessionId, terminalId: big.terminalId });
      expect(bounded.truncated).toBe(true);
      expect(Buffer.byteLength(bounded.output)).toBeLessThanOrEqual(1000);
      // Cut inside a multi-byte character: the partial character is dropped.
      const wide = await services.createTerminal({
        sessionId,
        command: "printf",
        args: ["ééééé"],
        outputByteLimit: 5,
      });
      await services.waitForTerminalExit({ sessionId, terminalId: wide.terminalId });
      expect(await services.terminalOutput({ sessionId, terminalId: wide.terminalId })).toMatchObject({
        output: "éé",
        truncated: true,
      });
    },
  );

  it.skipIf(skip)(
    "kill ends the command and what it started; the terminal stays readable until released",
    async () => {
      const { services } = await fresh();
      const child = uniqueSleep();
      const { terminalId } = await services.createTerminal({
        sessionId,
        command: "bash",
        args: ["-c", `echo started; sleep ${child} & sleep ${child}`],
      });
      await eventually(() => processesHolding(`sleep\0${child}`).length === 2, "both sleeps run");
      const waiting = services.waitForTerminalExit({ sessionId, terminalId });
      await services.killTerminal({ sessionId, terminalId });
      expect(await waiting).toEqual({ exitCode: null, signal: "SIGKILL" });
      await eventually(() => processesHolding(`sleep\0${child}`).length === 0, "both sleeps are gone");
      expect(await services.terminalOutput({ sessionId, terminalId })).toMatchObject({
        output: "started\n",
        exitStatus: { exitCode: null, signal: "SIGKILL" },
      });
      await services.killTerminal({ sessionId, terminalId });
      await services.releaseTerminal({ sessionId, terminalId });
      await expect(services.terminalOutput({ sessionId, terminalId })).rejects.toMatchObject({
        code: NOT_FOUND,
      });
    },
  );

  it.skipIf(skip)("release kills a running command and forgets the terminal", async () => {
    const { services } = await fresh();
    const marker = uniqueSleep();
    const { terminalId } = await services.createTerminal({ sessionId, command: "sleep", args: [marker] });
    await eventually(() => processesHolding(marker).length > 0, "the sleep runs");
    await services.releaseTerminal({ sessionId, terminalId });
    await eventually(() => processesHolding(marker).length === 0, "the sleep is gone");
    await expect(services.waitForTerminalExit({ sessionId, terminalId })).rejects.toMatchObject({
      code: NOT_FOUND,
    });
    await expect(services.releaseTerminal({ sessionId, terminalId })).rejects.toMatchObject({
      code: NOT_FOUND,
    });
  });

  it.skipIf(skip)("bounds live terminals, and close kills every one and refuses new ones", async () => {
    const { services } = await fresh({ maxTerminals: 2 });
    const markers = [uniqueSleep(), uniqueSleep()];
    for (const marker of markers)
      await services.createTerminal({ sessionId, command: "sleep", args: [marker] });
    await expect(services.createTerminal({ sessionId, command: "true" })).rejects.toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining("release one first"),
    });
    await eventually(() => markers.every((m) => processesHolding(m).length > 0), "both sleeps run");
    await services.close();
    await eventually(() => markers.every((m) => processesHolding(m).length === 0), "both sleeps are gone");
    await expect(services.createTerminal({ sessionId, command: "true" })).rejects.toMatchObject({
      code: INVALID_PARAMS,
    });
  });

  it.skipIf(skip)(
    "aborting the services' signal kills the terminals; a cancelled wait leaves the command",
    async () => {
      sessions += 1;
      sandbox = await provider.realize({
        tier,
        sessionId: `s${sessions}`,
        networking: { type: "unrestricted" },
      });
      const abort = new AbortController();
      const services = new HarnessClientServices(sandbox, { signal: abort.signal });
      open.push(services);
      const marker = uniqueSleep();
      const { terminalId } = await services.createTerminal({ sessionId, command: "sleep", args: [marker] });
      const cancelWait = new AbortController();
      const wait = services.waitForTerminalExit({ sessionId, terminalId }, cancelWait.signal);
      cancelWait.abort();
      await expect(wait).rejects.toMatchObject({ code: -32800 });
      await eventually(() => processesHolding(marker).length > 0, "the sleep still runs");
      abort.abort();
      await eventually(() => processesHolding(marker).length === 0, "the sleep is gone");
    },
  );
});
