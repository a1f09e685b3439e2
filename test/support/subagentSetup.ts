import type Anthropic from "@anthropic-ai/sdk";
import { MODEL } from "./sdkHelpers.js";

/**
 * A lead agent whose roster is one `researcher` (its system prompt `researcherSystem` when given),
 * and an environment whose sandbox is provisioned eagerly, as sandbox admission requires of an
 * agent with a roster.
 */
export async function leadWithResearcher(
  client: Anthropic,
  environmentName: string,
  researcherSystem?: string,
): Promise<{ researcherId: string; leadId: string; environmentId: string }> {
  const researcher = await client.beta.agents.create({
    name: "researcher",
    model: MODEL,
    ...(researcherSystem ? { system: researcherSystem } : {}),
  });
  const lead = await client.beta.agents.create({
    name: "lead",
    model: MODEL,
    multiagent: {
      type: "multiagent_20261001",
      subagents: { type: "enabled", predefined_agents: [researcher.id] },
    },
  });
  const environment = await client.beta.environments.create({
    name: environmentName,
    config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
  });
  return { researcherId: researcher.id, leadId: lead.id, environmentId: environment.id };
}
