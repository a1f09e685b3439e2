/**
 * The Hand tools against real sandboxes, without the server: the edge cases of each tool, on every
 * tier this host can realize (`none` always; `bwrap` when bubblewrap is installed). The tools use
 * only `Sandbox.exec`, so they must behave the same on both. The SDK-driven path is in
 * test/e2e/handTools.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HAND_TOOLS, type HandToolResult } from "../../src/runtime/hand/index.js";
import { BwrapTierProvider, bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import { NoneTierProvider } from "../../src/sandbox/noneTier.js";
import type { Sandbox, SandboxProvider } from "../../src/sandbox/ports.js";

const hasBwrap = await bwrapAvailable();
const signal = new AbortController().signal;

describe.each([
  { tier: "none" as const, skip: false },
  { tier: "bwrap" as const, skip: !hasBwrap },
])("Hand tools in the $tier tier", ({ tier, skip }) => {
  let root: string;
  let provider: SandboxProvider;
  let sandbox: Sandbox;
  let sessions = 0;

  beforeAll(async () => {
    if (skip) return;
    root = await mkdtemp(join(tmpdir(), `hand-${tier}-`));
    // Left 0700 as mkdtemp made it: sandboxes reach their workspaces under a closed parent.
    provider =
      tier === "none"
        ? new NoneTierProvider(join(root, "workspaces"))
        : new BwrapTierProvider({
            workspaceRoot: join(root, "workspaces"),
            uidRange: { first: 232_000, last: 232_099 },
          });
  });
  afterAll(async () => {
    if (skip) return;
    await provider.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A fresh session's sandbox for each test: workspaces never leak between tests. */
  async function fresh(): Promise<Sandbox> {
    sessions += 1;
    sandbox = await provider.realize({
      tier,
      sessionId: `s${sessions}`,
      networking: { type: "unrestricted" },
    });
    return sandbox;
  }
  async function call(name: string, input: Record<string, unknown>): Promise<HandToolResult> {
    const tool = HAND_TOOLS.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool.run(sandbox, input, signal);
  }
  const sh = async (command: string) => {
    const result = await call("bash", { command });
    expect(result.isError, result.text).toBe(false);
    return result.text;
  };

  it.skipIf(skip)(
    "bash: cwd and exported variables persist, exit included; restart forgets them",
    async () => {
      await fresh();
      await sh("mkdir -p 'a dir' && cd 'a dir' && export GREETING='hi there' && LOCAL=1");
      expect(await call("bash", { command: 'pwd; echo "$GREETING"; echo "[$LOCAL]"; exit 4' })).toEqual({
        text: `${sandbox.workspacePath}/a dir\nhi there\n[]\n[exit code: 4]`,
        isError: true,
      });
      await sh("cd ..");
      expect(await sh("pwd")).toBe(`${sandbox.workspacePath}\n[exit code: 0]`);
      await sh("cd 'a dir'");
      expect(await call("bash", { restart: true })).toEqual({
        text: "bash session restarted",
        isError: false,
      });
      expect(await sh('pwd; echo "[$GREETING]"')).toBe(`${sandbox.workspacePath}\n[]\n[exit code: 0]`);
      // restart with a command runs it in the fresh shell.
      await sh("export X=1; cd 'a dir'");
      expect(await call("bash", { command: 'pwd; echo "[$X]"', restart: true })).toMatchObject({
        text: `${sandbox.workspacePath}\n[]\n[exit code: 0]`,
      });
    },
  );

  it.skipIf(skip)(
    "bash: a vanished cwd falls back to the workspace; stdin is empty; big commands pass",
    async () => {
      await fresh();
      await sh("mkdir gone && cd gone && rmdir ../gone");
      const text = await sh("pwd; cat; echo after-cat");
      expect(text).toContain(`${sandbox.workspacePath}\nafter-cat`);
      expect(text).toMatch(/\[stderr\]\n\[the working directory .*gone is gone; starting in the workspace\]/);
      // Past one argv entry's limit (128 KiB): the command travels on stdin.
      const big = `: ${"x".repeat(200_000)}\necho big-ok`;
      expect(await sh(big)).toBe("big-ok\n[exit code: 0]");
      expect(await call("bash", {})).toEqual({ text: "bash: command is required", isError: true });
      expect(await call("bash", { command: "true", timeout_ms: "5" })).toEqual({
        text: "bash: timeout_ms must be a positive integer",
        isError: true,
      });
    },
  );

  it.skipIf(skip)(
    "read: numbered lines, view_range, cuts at a whole line with a hint; odd names",
    async () => {
      await fresh();
      await sh(
        "printf 'one\\ntwo\\nthree' > notes.txt; seq 1 20000 > big.txt; echo dash > ./-x; echo eq > a=b",
      );
      expect(await call("read", { file_path: "notes.txt" })).toEqual({
        text: "     1\tone\n     2\ttwo\n     3\tthree\n",
        isError: false,
      });
      expect((await call("read", { file_path: "notes.txt", view_range: [2, 2] })).text).toBe("     2\ttwo\n");
      expect((await call("read", { file_path: "notes.txt", view_range: [2, -1] })).text).toBe(
        "     2\ttwo\n     3\tthree\n",
      );
      expect((await call("read", { file_path: "notes.txt", view_range: [9, 10] })).text).toBe(
        "(notes.txt has 3 lines; none from line 9)",
      );
      expect((await call("read", { file_path: "-x" })).text).toBe("     1\tdash\n");
      expect((await call("read", { file_path: "a=b" })).text).toBe("     1\teq\n");
      expect((await call("read", { file_path: `${sandbox.workspacePath}/a=b` })).text).toBe("     1\teq\n");

      const big = await call("read", { file_path: "big.txt" });
      expect(big.isError).toBe(false);
      const last = /lines 1–(\d+) shown; view_range \[(\d+), \.\.\.\] reads on\]$/.exec(big.text);
      expect(last).not.toBeNull();
      const shownTo = Number(last?.[1]);
      expect(Number(last?.[2])).toBe(shownTo + 1);
      expect(big.text).toContain(`\n${String(shownTo).padStart(6)}\t${shownTo}\n[output truncated`);
      expect(Buffer.byteLength(big.text)).toBeLessThan(30_200);
    },
  );

  it.skipIf(skip)("read: refuses what is not a readable regular text file, without blocking", async () => {
    await fresh();
    await sh("mkdir d; mkfifo fifo; printf 'a\\0b' > bin; : > empty; ln -s missing dangling");
    const started = Date.now();
    expect(await call("read", { file_path: "fifo" })).toEqual({
      text: "read: fifo is not a regular file (a FIFO, socket or device): not opening it",
      isError: true,
    });
    expect((await call("read", { file_path: "/dev/zero" })).text).toMatch(/not a regular file/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await call("read", { file_path: "d" })).text).toBe(
      "read: d: is a directory (glob lists the files in it)",
    );
    expect((await call("read", { file_path: "nope" })).text).toBe("read: nope: no such file or directory");
    expect((await call("read", { file_path: "dangling" })).text).toBe(
      "read: dangling: no such file or directory (a symbolic link to missing, which does not exist in the sandbox)",
    );
    expect((await call("read", { file_path: "bin" })).text).toMatch(/binary file/);
    expect(await call("read", { file_path: "empty" })).toEqual({ text: "(empty is empty)", isError: false });
    expect((await call("read", { file_path: "" })).text).toMatch(/file_path is required/);
  });

  it.skipIf(skip)("write: parents created, mode kept, links written through, never half a file", async () => {
    await fresh();
    expect(await call("write", { file_path: "x/y/z.txt", content: "héllo\n" })).toEqual({
      text: "wrote 7 bytes to x/y/z.txt",
      isError: false,
    });
    expect(await sh("cat x/y/z.txt")).toBe("héllo\n[exit code: 0]");
    await sh("printf 'old' > run.sh && chmod 750 run.sh && ln -s run.sh link");
    await call("write", { file_path: "link", content: "echo new" });
    expect(await sh("stat -c %a run.sh; cat run.sh; echo; test -L link && echo still-a-link")).toBe(
      "750\necho new\nstill-a-link\n[exit code: 0]",
    );
    await call("write", { file_path: "-x", content: "" });
    expect(await sh("wc -c < ./-x; ls -A x/y")).toBe("0\nz.txt\n[exit code: 0]");
    expect(await call("write", { file_path: "x", content: "no" })).toEqual({
      text: "write: x: is a directory",
      isError: true,
    });
    const under = await call("write", { file_path: "x/y/z.txt/w", content: "no" });
    expect(under.isError).toBe(true);
    expect(under.text).toMatch(/^write: x\/y\/z\.txt\/w: /);
    expect((await call("write", { file_path: "a" })).text).toBe("write: content is required (a string)");
  });

  it.skipIf(skip)("edit: unique replacement, count in the error, replace_all, bytes kept", async () => {
    await fresh();
    await sh(
      "printf '\\xef\\xbb\\xbfa TODO\\nb TODO\\n' > f.txt; printf 'caf\\xe9' > latin1.txt; chmod 600 f.txt",
    );
    expect(await call("edit", { file_path: "f.txt", old_string: "TODO", new_string: "DONE" })).toEqual({
      text:
        "edit: old_string appears 2 times in f.txt (must be unique): include more of the surrounding text, " +
        "or set replace_all to replace every occurrence",
      isError: true,
    });
    expect(await call("edit", { file_path: "f.txt", old_string: "b TODO", new_string: "b $1 DONE" })).toEqual(
      {
        text: "edited f.txt (1 replacement(s))",
        isError: false,
      },
    );
    expect((await call("edit", { file_path: "f.txt", old_string: "zzz", new_string: "y" })).text).toBe(
      "edit: old_string not found in f.txt",
    );
    await call("edit", { file_path: "f.txt", old_string: "O", new_string: "0", replace_all: true });
    // The BOM and the mode survive; `$1` was inserted as is.
    expect(await sh("stat -c %a f.txt")).toBe("600\n[exit code: 0]");
    expect(await sh("head -c 3 f.txt | od -An -tx1")).toContain("ef bb bf");
    expect(await sh("tail -c +4 f.txt")).toBe("a T0D0\nb $1 D0NE\n[exit code: 0]");
    // Through a link, like read and write: the link stays, its target changes.
    await sh("ln -s f.txt link.txt");
    expect(
      (await call("edit", { file_path: "link.txt", old_string: "a T0D0", new_string: "a ok" })).isError,
    ).toBe(false);
    expect(await sh("test -L link.txt && head -c 7 f.txt | tail -c 4")).toBe("a ok\n[exit code: 0]");
    expect((await call("edit", { file_path: "latin1.txt", old_string: "caf", new_string: "x" })).text).toBe(
      "edit: latin1.txt is not a UTF-8 text file: not editing it",
    );
    expect((await call("edit", { file_path: "nope", old_string: "a", new_string: "b" })).text).toBe(
      "edit: nope: no such file or directory",
    );
    await sh("head -c 1100000 /dev/zero | tr '\\0' 'a' > huge.txt");
    expect((await call("edit", { file_path: "huge.txt", old_string: "a", new_string: "b" })).text).toMatch(
      /huge\.txt is 1100000 bytes, over the 1048576-byte limit/,
    );
  });

  it.skipIf(skip)(
    "glob: newest first, alternatives, hidden/vendored/state left out unless named",
    async () => {
      await fresh();
      await sh(
        "mkdir -p src/deep .hidden node_modules/m && touch -d 2020-01-01 src/old.ts && " +
          "touch -d 2021-01-01 src/deep/mid.ts && touch src/new.ts src/c.js .hidden/h.ts node_modules/m/i.ts " +
          "&& touch -d 2019-01-01 ./-dash.ts",
      );
      expect(await call("glob", { pattern: "**/*.ts" })).toEqual({
        text: "src/new.ts\nsrc/deep/mid.ts\nsrc/old.ts\n-dash.ts",
        isError: false,
      });
      expect((await call("glob", { pattern: "src/*.{ts,js}" })).text).toBe(
        "src/c.js\nsrc/new.ts\nsrc/old.ts",
      );
      expect((await call("glob", { pattern: "**/*.ts", path: "src/deep" })).text).toBe("src/deep/mid.ts");
      expect((await call("glob", { pattern: ".hidden/*" })).text).toBe(".hidden/h.ts");
      expect((await call("glob", { pattern: "node_modules/**/*.ts" })).text).toBe("node_modules/m/i.ts");
      expect((await call("glob", { pattern: ".awaken/**" })).text).toBe("no matches");
      expect((await call("glob", { pattern: "**", path: ".awaken" })).text).toBe("no matches");
      expect((await call("glob", { pattern: "*.none" })).text).toBe("no matches");
      expect(await call("glob", { pattern: "../*" })).toEqual({
        text: 'glob: ".." is not permitted in the pattern',
        isError: true,
      });
      expect((await call("glob", { pattern: "*", path: "nowhere" })).text).toBe(
        "glob: nowhere: no such file or directory",
      );
      expect((await call("glob", { pattern: "*", path: "src/c.js" })).text).toBe(
        "glob: src/c.js: not a directory",
      );
    },
  );

  it.skipIf(skip)("glob: at most 200 results, the newest", async () => {
    await fresh();
    await sh('for i in $(seq 1 205); do touch -d "2020-01-01 + $i minutes" f$i.txt; done');
    const result = await call("glob", { pattern: "*.txt" });
    const lines = result.text.split("\n");
    expect(lines).toHaveLength(201);
    expect(lines[0]).toBe("f205.txt");
    expect(lines[199]).toBe("f6.txt");
    expect(lines[200]).toBe("[more than 200 matches: the 200 newest are shown]");
  });

  it.skipIf(skip)(
    "grep: path:line:text, Perl-style classes, skips binary/vendored/state, caps results",
    async () => {
      await fresh();
      await sh(
        "mkdir -p src node_modules/m && printf 'let a = 1;\\nno digits\\nb = 22\\n' > src/a.ts && " +
          "echo 'a = 3' > node_modules/m/i.ts && printf 'a = 4\\0' > bin.dat && echo 'x = 5' > ./-x.txt",
      );
      expect(await call("grep", { pattern: "\\d+" })).toEqual({
        text: "-x.txt:1:x = 5\nsrc/a.ts:1:let a = 1;\nsrc/a.ts:3:b = 22",
        isError: false,
      });
      expect((await call("grep", { pattern: "= \\d", path: "src" })).text).toBe(
        "src/a.ts:1:let a = 1;\nsrc/a.ts:3:b = 22",
      );
      expect((await call("grep", { pattern: "-x|5", path: "-x.txt" })).text).toBe("-x.txt:1:x = 5");
      expect((await call("grep", { pattern: "declare" })).text).toBe("no matches");
      expect(await call("grep", { pattern: "(unclosed" })).toMatchObject({ isError: true });
      expect((await call("grep", { pattern: "x", path: "nowhere" })).text).toBe(
        "grep: nowhere: no such file or directory",
      );
      await sh(
        "for i in $(seq 1 300); do echo hit >> many.txt; done; head -c 5000 /dev/zero | tr '\\0' y > long.txt",
      );
      const many = await call("grep", { pattern: "hit", path: "many.txt" });
      expect(many.text.split("\n")).toHaveLength(251);
      expect(many.text).toMatch(/\n\[more matches not shown: narrow the pattern or the path\]$/);
      const long = await call("grep", { pattern: "y", path: "long.txt" });
      expect(long.text).toBe(`long.txt:1:${"y".repeat(2000 - "long.txt:1:".length)} [line cut]`);
    },
  );

  it.skipIf(skip)(
    "no tool's shell reads a startup file the workspace holds (.bashrc, .profile, .bash_profile)",
    async () => {
      await fresh();
      // Written by the agent's own tools, these would otherwise run before every later tool call.
      await sh('for f in .bashrc .profile .bash_profile; do echo "touch ran-$f; echo from-$f" > $f; done');
      expect(await sh("echo ok")).toBe("ok\n[exit code: 0]");
      expect((await call("read", { file_path: ".bashrc" })).isError).toBe(false);
      expect(await call("glob", { pattern: "ran-*" })).toEqual({ text: "no matches", isError: false });
    },
  );
});
