import { Option } from "commander";
import { ACP_RUNTIMES_FILE_ENV } from "../brains/runtimeFile.js";

/**
 * `--acp-runtimes <file>`: the operator's ACP runtimes (JSON, docs/acp.md), added to the shipped
 * ones or replacing one by name. The same file on every process of a deployment: Control checks
 * `acp:<runtime>` models against it, the coordinator lists them, workers launch them.
 */
export function acpRuntimesOption(): Option {
  return new Option(
    "--acp-runtimes <file>",
    "ACP runtimes for acp:<runtime> models, added to the shipped claude, codex, gemini and opencode (JSON: {runtimes: [...]})",
  ).env(ACP_RUNTIMES_FILE_ENV);
}
