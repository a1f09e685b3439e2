import type { AgentDefinition } from "../control/agentDefinition.js";
import { isA2aModel } from "../kernel/a2aModel.js";
import { isAcpModel } from "../kernel/acpModel.js";
import { invalid } from "../kernel/errors.js";
import { type EnvironmentConfig, sandboxProvisioningOf, sandboxTierOf } from "./environmentConfig.js";

/** The type a requested session resource names (the wire's `type`), or null. */
function resourceType(resource: unknown): string | null {
  if (resource === null || typeof resource !== "object") return null;
  const type = (resource as { type?: unknown }).type;
  return typeof type === "string" ? type : null;
}

/**
 * Whether the session's resources and skills can be mounted: a cloud environment on a tier with a
 * mount namespace (bwrap). Elsewhere (a self_hosted environment runs no sandbox here; the `none`
 * tier has no mount namespace, so a mount path would be a host path shared by every session)
 * skills and memory stores are served as tools, and files and repositories are refused.
 */
export function mountsResources(environment: EnvironmentConfig): boolean {
  return environment.type === "cloud" && sandboxTierOf(environment) !== "none";
}

/**
 * Files and repositories need a filesystem the agent's tools see: refused at session creation,
 * naming the rule, where the environment has none. A file is mounted at its absolute path, which
 * needs a mount namespace (the bwrap tier); a repository is cloned into the workspace, which any
 * cloud sandbox has.
 */
export function admitResourceMounts(environment: EnvironmentConfig, resources: readonly unknown[]): void {
  const types = new Set(resources.map(resourceType));
  if (environment.type !== "cloud" && (types.has("file") || types.has("github_repository")))
    throw invalid(
      "resources: file and github_repository resources need a sandbox, and a self_hosted environment " +
        "runs none on this server. Use a cloud environment (memory stores and skills work everywhere).",
    );
  if (types.has("file") && !mountsResources(environment))
    throw invalid(
      'resources: file resources are mounted at their mount_path, and the environment\'s "none" sandbox ' +
        "tier has no mount namespace to do it in. Use the bwrap tier (memory stores, skills and repositories work on both).",
    );
}

/** Why a session of this agent needs its sandbox before the first tool call (empty: it does not). */
export function earlyRealizationNeeds(agent: AgentDefinition, resources: readonly unknown[]): string[] {
  const reasons: string[] = [];
  if (isA2aModel(agent.model.id))
    reasons.push("the agent's model is a remote A2A agent (an a2a: delegate cannot provision on tool use)");
  if (isAcpModel(agent.model.id))
    reasons.push(
      "the agent's model is an ACP harness (an acp: Brain runs inside the sandbox from the first turn)",
    );
  if (agent.skills.length > 0)
    reasons.push("the agent has skills (a filesystem skill is read from the sandbox)");
  // A definition published before agents had the field has none (undefined): it delegates nothing.
  if (agent.multiagent != null) reasons.push("the agent delegates to other agents (a published delegate)");
  if (resources.length > 0)
    reasons.push("the session mounts resources (files, memory stores or repositories)");
  return reasons;
}

/**
 * An `acp:` agent's Brain is a harness process started inside the session's sandbox: refused at
 * session creation, naming the rule, where the environment runs none (self_hosted).
 */
export function admitAcpBrain(agent: AgentDefinition, environment: EnvironmentConfig): void {
  if (!isAcpModel(agent.model.id) || environment.type === "cloud") return;
  throw invalid(
    "model: an acp: agent's harness runs inside the session's sandbox, and a self_hosted environment " +
      "runs none on this server. Use a cloud environment for this agent.",
  );
}

/**
 * Admission for `sandbox_provisioning: on_tool_use`: a session may start without a
 * sandbox only when nothing needs local state before the first Hand tool. Anything that does is
 * refused at session creation, naming the rule, instead of silently provisioning eagerly.
 * A remote A2A agent as the Brain is one of them: the delegate hands the turn over whole, so there
 * is no first Hand tool call to provision on. So is an ACP harness, which runs in the sandbox.
 */
export function admitSandboxProvisioning(
  agent: AgentDefinition,
  environment: EnvironmentConfig,
  resources: readonly unknown[],
): void {
  admitAcpBrain(agent, environment);
  admitResourceMounts(environment, resources);
  if (sandboxProvisioningOf(environment) !== "on_tool_use") return;
  const reasons = earlyRealizationNeeds(agent, resources);
  if (reasons.length === 0) return;
  throw invalid(
    `sandbox_provisioning "on_tool_use" cannot start this session: ${reasons.join("; ")}. These need ` +
      'the sandbox before the first tool call: set config.sandbox.provisioning to "eager" on the environment',
  );
}
