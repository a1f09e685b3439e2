/**
 * ACP Brains: coding-agent harnesses an operator registers as runtimes, each started inside a
 * session's sandbox speaking the Agent Client Protocol on stdio. This file is what crosses the
 * context's edge: a runtime's definition and the catalog that names them.
 */

/** An environment variable of the harness: text as written, or a vault secret opened for one launch. */
export type HarnessEnvValue = string | { readonly vault_secret: string };

export interface AcpRuntimeDefinition {
  /** What agents select with `model: "acp:<name>"`. */
  readonly name: string;
  /** One line for people: what the harness is. */
  readonly description: string;
  /**
   * The argv that starts the harness speaking ACP on stdin/stdout, run inside the sandbox from the
   * workspace. The first element is looked up on the sandbox's PATH (the environment's packages).
   */
  readonly command: readonly string[];
  /**
   * The package that provides the command, pinned: it must be among the environment's packages
   * (frozen like any other); a session whose environment lacks it fails its launch naming it.
   */
  readonly package: { readonly manager: "npm" | "pip"; readonly name: string; readonly version: string };
  /** Variables the harness needs, e.g. its provider's key as a vault secret. */
  readonly env: Readonly<Record<string, HarnessEnvValue>>;
  /** The file the harness reads as its project memory, in the workspace (`CLAUDE.md`, `AGENTS.md`). */
  readonly memory_file: string;
}

/** The runtimes one process knows: shipped definitions plus the operator's own. */
export interface AcpRuntimeCatalog {
  get(name: string): AcpRuntimeDefinition | null;
  list(): readonly AcpRuntimeDefinition[];
}
