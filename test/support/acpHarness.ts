/**
 * A shipped ACP harness installed from the npm registry into a directory of the test's own, the
 * way the product's package preparer installs an environment's npm packages (`--ignore-scripts`:
 * no package code runs at install). Only `claude` is known to run offline (docs/acp.md, "Shipped
 * runtimes"); it downloads nothing beyond registry tarballs.
 *
 * How an end-to-end test drives it (what was checked by hand against the fake Anthropic server):
 * - start `startFakeAnthropic()` and give the harness `ANTHROPIC_BASE_URL` (its URL), any
 *   `ANTHROPIC_API_KEY`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, and a `HOME` of its own (it
 *   writes `~/.claude.json`, `~/.claude/projects/…` and `~/.claude/shell-snapshots/…` there);
 * - spawn the returned `bin` with the workspace as its cwd, and wrap its stdio with the ACP SDK's
 *   `ndJsonStream(Writable.toWeb(stdin), Readable.toWeb(stdout))`, then
 *   `client({ name }).onRequest(methods.client.session.requestPermission, …).connectWith(stream, …)`;
 * - `initialize` (protocolVersion 1) answers at once; `session/new` takes ~5 s on this machine
 *   (Claude Code's start-up); a text turn is one Messages request (model `claude-sonnet-4-6`, with
 *   `CLAUDE.md` from the cwd in its context); a scripted `Bash` tool_use raises exactly one
 *   `session/request_permission` (allow_always / allow_once / reject_once) before it runs, and the
 *   tool_result comes back in the next Messages request.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AcpRuntimeDefinition } from "../../src/brains/ports.js";

const run = promisify(execFile);

/**
 * Installs `runtime`'s pinned npm package under `dir` and returns the path of its command's program
 * (`<dir>/node_modules/.bin/<command[0]>`) and the rest of its argv. A few minutes at most on a cold
 * npm cache (claude-agent-acp is ~85 MB unpacked); the caller removes `dir`.
 */
export async function installAcpHarness(
  runtime: AcpRuntimeDefinition,
  dir: string,
): Promise<{ bin: string; args: string[] }> {
  if (runtime.package.manager !== "npm") throw new Error(`${runtime.name}: only npm harnesses install here`);
  const spec = `${runtime.package.name}@${runtime.package.version}`;
  await run(
    "npm",
    ["install", "--prefix", dir, "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", "--", spec],
    { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const [program, ...args] = runtime.command;
  if (!program) throw new Error(`${runtime.name}: the definition has no command`);
  return { bin: join(dir, "node_modules", ".bin", program), args };
}
