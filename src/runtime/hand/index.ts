/**
 * The built-in Hand tools of `agent_toolset_20260401` (bash, read, write, edit, glob, grep), run
 * server-side inside the session's sandbox through `Sandbox.exec` alone, so they work on every
 * tier and never touch the workspace from the host. Their inputs have the shapes of the SDK's own
 * implementations (`@anthropic-ai/sdk/tools/agent-toolset/node`), so one prompt works on both.
 *
 * Each declares whether it is safe to repeat: after a crash, a call found started with no result is
 * re-run only if it is; otherwise its outcome is reported as unknown.
 */
import { bash } from "./bash.js";
import type { HandTool } from "./common.js";
import { edit } from "./edit.js";
import { glob } from "./glob.js";
import { grep } from "./grep.js";
import { read } from "./read.js";
import { write } from "./write.js";

export { type HandTool, type HandToolResult, MAX_TOOL_OUTPUT_BYTES } from "./common.js";

/** The Hand tools this build runs, by name. */
export const HAND_TOOLS: ReadonlyMap<string, HandTool> = new Map(
  [bash, read, write, edit, glob, grep].map((tool) => [tool.spec.name, tool]),
);
