import type { AcpRuntimeDefinition } from "./ports.js";

/**
 * The harnesses Awaken knows without an operator file, each pinned to an exact release (checked
 * against the npm registry when pinned; docs/acp.md says what each needs and which run offline).
 * An operator's runtime file adds to these or replaces one by name (runtimeFile.ts).
 */
export const SHIPPED_ACP_RUNTIMES: readonly AcpRuntimeDefinition[] = [
  {
    name: "claude",
    description: "Claude Code through Zed's ACP adapter (Anthropic Messages API)",
    command: ["claude-agent-acp"],
    package: { manager: "npm", name: "@zed-industries/claude-agent-acp", version: "0.23.1" },
    env: {
      ANTHROPIC_API_KEY: { vault_secret: "ANTHROPIC_API_KEY" },
      // Telemetry and update checks are no part of a turn; without this it looks up their hosts.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    memory_file: "CLAUDE.md",
  },
  {
    name: "codex",
    description: "OpenAI Codex through Zed's ACP adapter (OpenAI Responses API)",
    command: ["codex-acp"],
    package: { manager: "npm", name: "@zed-industries/codex-acp", version: "0.16.0" },
    env: { OPENAI_API_KEY: { vault_secret: "OPENAI_API_KEY" } },
    memory_file: "AGENTS.md",
  },
  {
    name: "gemini",
    description: "Gemini CLI in its ACP mode (Gemini API)",
    command: ["gemini", "--acp"],
    package: { manager: "npm", name: "@google/gemini-cli", version: "0.61.0" },
    env: { GEMINI_API_KEY: { vault_secret: "GEMINI_API_KEY" } },
    memory_file: "GEMINI.md",
  },
  {
    name: "opencode",
    description: "opencode in its ACP mode (its own provider configuration; Anthropic by default here)",
    command: ["opencode", "acp"],
    package: { manager: "npm", name: "opencode-ai", version: "1.18.33" },
    env: { ANTHROPIC_API_KEY: { vault_secret: "ANTHROPIC_API_KEY" } },
    memory_file: "AGENTS.md",
  },
];
