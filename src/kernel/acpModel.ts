/**
 * An agent whose model id is `acp:<runtime>` has a coding-agent harness as its Brain: each turn is
 * a `session/prompt` to that harness, launched inside the session's sandbox. Parsed in one place so
 * Control (validation), the Coordinator (admission) and the runtime agree on what counts as one.
 */

export const ACP_MODEL_PREFIX = "acp:";

/** A runtime name: lower-case letters, digits and dashes, starting with a letter or digit. */
const RUNTIME_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** True for any `acp:` model id, valid or not (validation says what is wrong with it). */
export function isAcpModel(model: string): boolean {
  return model.toLowerCase().startsWith(ACP_MODEL_PREFIX);
}

/** The runtime name of a valid `acp:` model id; null when the id is not one. */
export function acpRuntimeName(model: string): string | null {
  if (!isAcpModel(model)) return null;
  return acpModelProblem(model) === null ? model.slice(ACP_MODEL_PREFIX.length) : null;
}

/** Why an `acp:` model id cannot be used (null when it can). */
export function acpModelProblem(model: string): string | null {
  const name = model.slice(ACP_MODEL_PREFIX.length);
  if (name === "") return "an acp: model needs a registered ACP runtime's name after the prefix (e.g. acp:claude)";
  if (!RUNTIME_NAME.test(name))
    return "the ACP runtime name after acp: must be lower-case letters, digits and dashes (at most 63)";
  return null;
}

export function isAcpRuntimeName(name: string): boolean {
  return RUNTIME_NAME.test(name);
}
