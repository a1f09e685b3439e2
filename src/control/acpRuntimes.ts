import type { AcpRuntimeCatalog } from "../brains/ports.js";
import { acpRuntimeName, isAcpModel } from "../kernel/acpModel.js";
import { AwakenError } from "../kernel/errors.js";
import type { AgentDefinition } from "./agentDefinition.js";

/** What Control reads of the ACP runtime catalog: which runtimes exist and what each needs. */
export type KnownAcpRuntimes = Pick<AcpRuntimeCatalog, "get" | "list">;

/** No runtime at all: a composition that passes no catalog accepts no `acp:` model. */
export const NO_ACP_RUNTIMES: KnownAcpRuntimes = { get: () => null, list: () => [] };

/**
 * An `acp:<runtime>` model must name a runtime this Control knows (shipped or the operator's file):
 * refused at publication naming it and the known ones, rather than a session failing at launch.
 * The id's own grammar was checked by `validateAgentDefinition` before this.
 */
export function assertKnownAcpRuntime(definition: AgentDefinition, runtimes: KnownAcpRuntimes): void {
  const model = definition.model.id;
  if (!isAcpModel(model)) return;
  const name = acpRuntimeName(model);
  if (name === null || runtimes.get(name) !== null) return;
  const known = runtimes.list().map((runtime) => runtime.name);
  throw new AwakenError(
    "invalid_request",
    `model: there is no ACP runtime named "${name}" on this server; ` +
      (known.length === 0 ? "it knows none" : `it knows ${known.map((n) => `acp:${n}`).join(", ")}`) +
      " (an operator adds runtimes with --acp-runtimes)",
  );
}

/** The vault secrets an `acp:` agent's harness is started with (none for any other model). */
export function harnessSecretNames(definition: AgentDefinition, runtimes: KnownAcpRuntimes): string[] {
  const name = acpRuntimeName(definition.model.id);
  const runtime = name === null ? null : runtimes.get(name);
  if (!runtime) return [];
  return Object.values(runtime.env).flatMap((value) =>
    typeof value === "string" ? [] : [value.vault_secret],
  );
}
