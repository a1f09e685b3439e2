/**
 * The workspace's built-in dreamer agent: an ordinary agent (so a dream's session pins, registers
 * and runs like every session) named `awaken-dreamer`, made on the workspace's first dream and found
 * by name after that (concurrent first dreams make one). Each dream's session overrides its model,
 * system prompt and tools, so an edit to the agent never changes what a dream runs.
 */
import type { Actor } from "../control/adminAudit.js";
import type { AgentCreateInput } from "../control/agentDefinition.js";
import type { SessionNameStore } from "../coordinator/ports.js";
import type { AgentRef } from "../coordinator/sessionEntry.js";
import { claimName, DEFAULT_NAME_CLAIM_TIMING } from "../coordinator/sessionEntryNames.js";
import type { Clock } from "../kernel/clock.js";
import { DREAMER_SYSTEM_PROMPT } from "../providers/dreaming.js";

export const DREAMER_AGENT_NAME = "awaken-dreamer";

/** Control's agents, as much as the dreamer needs (in process, or over the private link). */
export interface DreamerAgentAuthoring {
  create(by: Actor, input: AgentCreateInput): Promise<{ head: { id: string } }>;
  retrieve(
    workspaceId: string,
    agentId: string,
  ): Promise<{ head: { id: string; archivedAt: number | null } }>;
  archive(by: Actor, agentId: string): Promise<unknown>;
}

export class DreamerAgents {
  constructor(
    private readonly deps: { agents: DreamerAgentAuthoring; names: SessionNameStore; clock: Clock },
  ) {}

  /** The agent a dream's session runs, with the dream's model and the dreamer's prompt pinned. */
  async refFor(workspaceId: string, model: string): Promise<AgentRef> {
    const id = await this.agentId(workspaceId, model);
    return {
      id,
      overrides: {
        model: { id: model },
        system: DREAMER_SYSTEM_PROMPT,
        tools: [],
        mcp_servers: [],
        skills: [],
      },
    };
  }

  private agentId(workspaceId: string, model: string): Promise<string> {
    // The server makes the agent on the dream's behalf.
    const system: Actor = { workspaceId, actor: "system" };
    const { agents } = this.deps;
    return claimName(
      this.deps.names,
      this.deps.clock,
      DEFAULT_NAME_CLAIM_TIMING,
      { workspaceId, space: "dreamer_agent", name: DREAMER_AGENT_NAME },
      {
        existing: async (id) => {
          const found = await agents.retrieve(workspaceId, id).catch(() => null);
          return found && found.head.archivedAt === null ? id : null;
        },
        create: async () => {
          const made = await agents.create(system, {
            name: DREAMER_AGENT_NAME,
            description: "Runs dreams (made by the server on the workspace's first dream)",
            model,
            system: DREAMER_SYSTEM_PROMPT,
          });
          return { id: made.head.id, value: made.head.id };
        },
        discard: async (id) => {
          await agents.archive(system, id);
        },
      },
    );
  }
}
