import type { AgentDefinition } from "../control/agentDefinition.js";
import { isA2aModel } from "../kernel/a2aModel.js";
import { invalid } from "../kernel/errors.js";
import { type EnvironmentConfig, sandboxProvisioningOf } from "./environmentConfig.js";

/**
 * Admission for `sandbox_provisioning: on_tool_use`: a session may start without a
 * sandbox only when nothing needs local state before the first Hand tool. Anything that does is
 * refused at session creation, naming the rule, instead of silently provisioning eagerly.
 * A remote A2A agent as the Brain is one of them: the delegate hands the turn over whole, so there
 * is no first Hand tool call to provision on.
 */
export function admitSandboxProvisioning(
  agent: AgentDefinition,
  environment: EnvironmentConfig,
  resources: readonly unknown[],
): void {
  if (sandboxProvisioningOf(environment) !== "on_tool_use") return;
  const reasons: string[] = [];
  if (isA2aModel(agent.model.id))
    reasons.push("the agent's model is a remote A2A agent (an a2a: delegate cannot provision on tool use)");
  if (agent.skills.length > 0)
    reasons.push("the agent has skills (a filesystem skill is read from the sandbox)");
  if (agent.multiagent !== null) reasons.push("the agent delegates to other agents (a published delegate)");
  if (resources.length > 0) reasons.push("the session mounts resources (files or repositories)");
  if (reasons.length === 0) return;
  throw invalid(
    `sandbox_provisioning "on_tool_use" cannot start this session: ${reasons.join("; ")}. These need ` +
      'the sandbox before the first tool call: set config.sandbox.provisioning to "eager" on the environment',
  );
}
