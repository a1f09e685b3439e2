import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import {
  history,
  isEndTurnIdle,
  MODEL,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const hasBwrap = await bwrapAvailable();
let t: TestServer;
beforeAll(async () => {
  // Most sessions here run on tier "none": the operator option enables it.
  t = await startTestServer({ workerPollMs: 50, allowWeakerTiers: true });
  // The data dir stays 0700 as mkdtemp made it: bwrap sandboxes reach their workspaces all the same.
});
afterAll(async () => {
  await t.close();
});

const TOOLSET = { type: "agent_toolset_20260401" as const };

async function session(
  client: Anthropic,
  options: { tier?: "none" | "bwrap"; tools?: Array<Record<string, unknown>> } = {},
) {
  const agent = await client.beta.agents.create({
    name: "hands",
    model: MODEL,
    tools: (options.tools ?? [TOOLSET]) as never,
  });
  const environment = await client.beta.environments.create({
    name: "hands",
    // Awaken extension: the isolation tier of the environment's Hand tools.
    config: { type: "cloud", sandbox: { tier: options.tier ?? "none" } } as never,
  });
  return client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

async function turn(sessionId: string, text: string): Promise<WireEvent[]> {
  const before = (await history(t.client, sessionId)).filter(isEndTurnIdle).length;
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage(text)] });
  return waitForHistory(t.client, sessionId, (h) => h.filter(isEndTurnIdle).length > before, 15_000);
}

const last = (events: WireEvent[], type: string) => events.filter((e) => e.type === type).at(-1);

/** One tool call driven through the offline model: the result the model was given. */
async function call(sessionId: string, tool: string, input: Record<string, unknown>) {
  const events = await turn(sessionId, `call ${tool} ${JSON.stringify(input)}`);
  const use = last(events, "agent.tool_use");
  expect(use).toMatchObject({ name: tool, input });
  const result = last(events, "agent.tool_result");
  expect(result?.tool_use_id).toBe(use?.id);
  return { text: textOf(result), isError: result?.is_error };
}

describe("Hand tools run server-side in the session's sandbox (wire §3.4 case 1)", () => {
  it("bash: agent.tool_use (allowed) → agent.tool_result with the output → the model answers it", async () => {
    const s = await session(t.client);
    const events = await turn(s.id, 'call bash {"command":"echo hello from $PWD; echo oops >&2; exit 3"}');

    const use = last(events, "agent.tool_use");
    expect(use).toMatchObject({
      name: "bash",
      input: { command: expect.stringContaining("echo hello") },
      evaluated_permission: "allow",
      evaluation: { type: "always_allow" },
    });
    const result = last(events, "agent.tool_result");
    expect(result).toMatchObject({ tool_use_id: use?.id, is_error: true });
    const text = textOf(result);
    const workspace = join(t.dataDir, "workspaces", s.id);
    expect(text).toContain(`hello from ${workspace}`);
    expect(text).toContain("[stderr]\noops");
    expect(text).toContain("[exit code: 3]");
    // Then the model saw the result and answered, and the turn ended.
    const order = events.map((e) => e.type);
    expect(order.indexOf("agent.tool_result")).toBeGreaterThan(order.indexOf("agent.tool_use"));
    expect(textOf(events.filter((e) => e.type === "agent.message").at(-1))).toContain("Tool result received");
    expect(events.at(-1)?.type).toBe("session.status_idle");
    // The intent bookkeeping holds a version but is never shown on the wire.
    expect(events.some((e) => e.type.startsWith("awaken."))).toBe(false);
  });

  it("bash keeps its working directory and exported variables between calls; restart resets them", async () => {
    const s = await session(t.client);
    const workspace = join(t.dataDir, "workspaces", s.id);
    expect(await call(s.id, "bash", { command: "mkdir -p sub && cd sub && export GREETING=hello" })).toEqual({
      text: "[exit code: 0]",
      isError: false,
    });
    expect(await call(s.id, "bash", { command: 'pwd; echo "$GREETING"' })).toEqual({
      text: `${workspace}/sub\nhello\n[exit code: 0]`,
      isError: false,
    });
    expect(await call(s.id, "bash", { restart: true })).toEqual({
      text: "bash session restarted",
      isError: false,
    });
    expect(await call(s.id, "bash", { command: 'pwd; echo "[$GREETING]"' })).toEqual({
      text: `${workspace}\n[]\n[exit code: 0]`,
      isError: false,
    });
    expect(await call(s.id, "bash", {})).toEqual({ text: "bash: command is required", isError: true });
  });

  it("write creates parent directories and reports the bytes; a directory is refused", async () => {
    const s = await session(t.client);
    expect(await call(s.id, "write", { file_path: "a/b.txt", content: "x" })).toEqual({
      text: "wrote 1 bytes to a/b.txt",
      isError: false,
    });
    expect(readFileSync(join(t.dataDir, "workspaces", s.id, "a/b.txt"), "utf8")).toBe("x");
    // Same content again: same file (write is safe to repeat).
    await call(s.id, "write", { file_path: "a/b.txt", content: "x" });
    expect(readFileSync(join(t.dataDir, "workspaces", s.id, "a/b.txt"), "utf8")).toBe("x");
    expect(await call(s.id, "write", { file_path: "a", content: "x" })).toEqual({
      text: "write: a: is a directory",
      isError: true,
    });
  });

  it("read returns numbered lines of a view_range; missing, directory, FIFO and binary are errors", async () => {
    const s = await session(t.client);
    await call(s.id, "write", { file_path: "notes.txt", content: "one\ntwo\nthree\n" });
    expect(await call(s.id, "read", { file_path: "notes.txt", view_range: [2, 3] })).toEqual({
      text: "     2\ttwo\n     3\tthree\n",
      isError: false,
    });
    expect(await call(s.id, "read", { file_path: "notes.txt" })).toEqual({
      text: "     1\tone\n     2\ttwo\n     3\tthree\n",
      isError: false,
    });
    expect(await call(s.id, "read", { file_path: "nope.txt" })).toEqual({
      text: "read: nope.txt: no such file or directory",
      isError: true,
    });
    await call(s.id, "bash", { command: "mkdir dir && mkfifo fifo && printf 'a\\0b' > blob" });
    expect(await call(s.id, "read", { file_path: "dir" })).toMatchObject({
      text: expect.stringMatching(/is a directory/),
      isError: true,
    });
    // Refused before it is opened: reading a FIFO would wait for a writer.
    expect(await call(s.id, "read", { file_path: "fifo" })).toMatchObject({
      text: expect.stringMatching(/not a regular file/),
      isError: true,
    });
    expect(await call(s.id, "read", { file_path: "blob" })).toMatchObject({
      text: expect.stringMatching(/binary file/),
      isError: true,
    });
  });

  it("edit replaces a unique string; a repeated one is refused with its count unless replace_all", async () => {
    const s = await session(t.client);
    const file = join(t.dataDir, "workspaces", s.id, "code.ts");
    await call(s.id, "write", { file_path: "code.ts", content: "let a = TODO;\nlet b = TODO;\n" });
    expect(
      await call(s.id, "edit", { file_path: "code.ts", old_string: "TODO", new_string: "1" }),
    ).toMatchObject({
      text: expect.stringMatching(/^edit: old_string appears 2 times in code\.ts \(must be unique\)/),
      isError: true,
    });
    expect(readFileSync(file, "utf8")).toBe("let a = TODO;\nlet b = TODO;\n");
    expect(
      await call(s.id, "edit", { file_path: "code.ts", old_string: "a = TODO", new_string: "a = 1" }),
    ).toEqual({
      text: "edited code.ts (1 replacement(s))",
      isError: false,
    });
    expect(
      await call(s.id, "edit", {
        file_path: "code.ts",
        old_string: "let",
        new_string: "const",
        replace_all: true,
      }),
    ).toEqual({ text: "edited code.ts (2 replacement(s))", isError: false });
    expect(readFileSync(file, "utf8")).toBe("const a = 1;\nconst b = TODO;\n");
    expect(await call(s.id, "edit", { file_path: "code.ts", old_string: "absent", new_string: "x" })).toEqual(
      {
        text: "edit: old_string not found in code.ts",
        isError: true,
      },
    );
  });

  it("glob lists matches newest first and hides the tools' own state; absolute patterns are refused", async () => {
    const s = await session(t.client);
    await call(s.id, "bash", {
      command:
        "mkdir -p src && touch -d 2020-01-01 src/old.ts && touch -d 2021-01-01 mid.ts && touch src/new.ts",
    });
    expect(await call(s.id, "glob", { pattern: "**/*.ts" })).toEqual({
      text: "src/new.ts\nmid.ts\nsrc/old.ts",
      isError: false,
    });
    expect(await call(s.id, "glob", { pattern: "*.ts", path: "src" })).toEqual({
      text: "src/new.ts\nsrc/old.ts",
      isError: false,
    });
    // The bash tool's saved state is there, but not for glob.
    expect(existsSync(join(t.dataDir, "workspaces", s.id, ".awaken/bash/env"))).toBe(true);
    expect(await call(s.id, "glob", { pattern: ".awaken/**" })).toEqual({
      text: "no matches",
      isError: false,
    });
    expect(await call(s.id, "glob", { pattern: "/etc/*" })).toMatchObject({
      text: expect.stringMatching(/absolute pattern not permitted/),
      isError: true,
    });
  });

  it("grep prints path:line:text for each match, skips the tools' state; a bad pattern is an error", async () => {
    const s = await session(t.client);
    await call(s.id, "write", { file_path: "src/a.ts", content: "const answer = 42;\nconst other = 'x';\n" });
    await call(s.id, "write", { file_path: "b.txt", content: "no digits\nline 7\n" });
    await call(s.id, "bash", { command: "export SECRETISH=value-in-state" });
    expect(await call(s.id, "grep", { pattern: "\\d+" })).toEqual({
      text: "b.txt:2:line 7\nsrc/a.ts:1:const answer = 42;",
      isError: false,
    });
    expect(await call(s.id, "grep", { pattern: "const", path: "src" })).toEqual({
      text: "src/a.ts:1:const answer = 42;\nsrc/a.ts:2:const other = 'x';",
      isError: false,
    });
    expect(await call(s.id, "grep", { pattern: "value-in-state" })).toEqual({
      text: "no matches",
      isError: false,
    });
    expect(await call(s.id, "grep", { pattern: "(unclosed" })).toMatchObject({ isError: true });
  });

  it("links the sandbox makes are followed inside the sandbox, never by the host", async () => {
    const s = await session(t.client);
    // /proc/self/cwd is the reading process's working directory: the workspace for a command in the
    // sandbox, the server's own directory for a host-side read, where no marker.txt exists.
    expect(existsSync(join(process.cwd(), "marker.txt"))).toBe(false);
    await call(s.id, "bash", {
      command:
        "echo inside > marker.txt && ln -s /proc/self/cwd/marker.txt via-proc && ln -s /etc/passwd passwd",
    });
    expect(await call(s.id, "read", { file_path: "via-proc" })).toEqual({
      text: "     1\tinside\n",
      isError: false,
    });
    // The `none` tier isolates nothing: the link reaches the host's file, as `none` means. The
    // refusals of a real escape belong to the bwrap tier's tests.
    expect(await call(s.id, "read", { file_path: "passwd" })).toMatchObject({
      text: expect.stringMatching(/^ +1\troot:/),
      isError: false,
    });
  });

  it("a command runs with a clean environment and is killed with its children past its timeout", async () => {
    const s = await session(t.client);
    const events = await turn(
      s.id,
      'call bash {"command":"env | sort; (sleep 30; touch late.txt) & sleep 30","timeout_ms":500}',
    );
    const text = textOf(last(events, "agent.tool_result"));
    expect(text).toContain("[killed after 500 ms");
    expect(text).not.toContain("AWAKEN_");
    expect(text).toMatch(/^PATH=/m);
    // The backgrounded child died with the group: it never gets to write its file.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(join(t.dataDir, "workspaces", s.id, "late.txt"))).toBe(false);
  });

  it("output past the limit is cut with a marker", async () => {
    const s = await session(t.client);
    const events = await turn(s.id, 'call bash {"command":"head -c 100000 /dev/zero | tr \'\\\\0\' x"}');
    const text = textOf(last(events, "agent.tool_result"));
    expect(text).toContain("[output truncated after 30000 bytes]");
    expect(text.length).toBeLessThan(31_000);
  });

  // Refusing a tier the host lacks is the bwrap tier's own test (test/sandbox/bwrapTier.test.ts).
  it.skipIf(!hasBwrap)(
    "in a bwrap session the same tools run inside bubblewrap, links resolved in its view",
    async () => {
      const s = await session(t.client, { tier: "bwrap" });
      expect(await call(s.id, "bash", { command: "mkdir -p sub && cd sub && id -un" })).toEqual({
        text: "sandbox\n[exit code: 0]",
        isError: false,
      });
      expect(await call(s.id, "bash", { command: "pwd" })).toEqual({
        text: "/workspace/sub\n[exit code: 0]",
        isError: false,
      });
      await call(s.id, "bash", {
        command:
          "cd .. && echo inside > marker.txt && ln -s /proc/self/cwd/marker.txt via-proc && ln -s /etc/shadow shadow",
      });
      expect(await call(s.id, "read", { file_path: "via-proc" })).toEqual({
        text: "     1\tinside\n",
        isError: false,
      });
      expect(await call(s.id, "read", { file_path: "shadow" })).toEqual({
        text: "read: shadow: no such file or directory (a symbolic link to /etc/shadow, which does not exist in the sandbox)",
        isError: true,
      });
      expect(await call(s.id, "write", { file_path: "/etc/evil", content: "x" })).toMatchObject({
        isError: true,
      });
      await call(s.id, "write", { file_path: "src/a.ts", content: "const a = TODO;\n" });
      await call(s.id, "edit", { file_path: "src/a.ts", old_string: "TODO", new_string: "42" });
      expect(await call(s.id, "grep", { pattern: "\\d+", path: "src" })).toEqual({
        text: "src/a.ts:1:const a = 42;",
        isError: false,
      });
      expect(await call(s.id, "glob", { pattern: "**/*.ts" })).toEqual({ text: "src/a.ts", isError: false });
    },
  );
});
