/**
 * An agent whose model id is `a2a:<agent card URL>` has a remote A2A agent as its Brain: each turn
 * runs as a task on that agent. The id is parsed in one place so Control (validation), the
 * Coordinator (admission) and the runtime (the delegate) agree on what counts as one.
 */

export const A2A_MODEL_PREFIX = "a2a:";

/** True for any `a2a:` model id, valid or not (validation says what is wrong with it). */
export function isA2aModel(model: string): boolean {
  return model.toLowerCase().startsWith(A2A_MODEL_PREFIX);
}

/** The agent card URL of a valid `a2a:` model id; null when the id is not one. */
export function a2aCardUrl(model: string): string | null {
  if (!isA2aModel(model)) return null;
  return a2aModelProblem(model) === null ? model.slice(A2A_MODEL_PREFIX.length) : null;
}

/**
 * Why an `a2a:` model id cannot be used (null when it can): the URL must be absolute http(s),
 * without credentials (they belong in a vault) and without a fragment.
 */
export function a2aModelProblem(model: string): string | null {
  const raw = model.slice(A2A_MODEL_PREFIX.length);
  if (raw === "") return "an a2a: model needs the remote agent card URL after the prefix";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "the URL after a2a: is not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return "the agent card URL must be http or https";
  if (url.username !== "" || url.password !== "")
    return "the agent card URL must not carry credentials; put the token in a vault credential for that URL";
  if (url.hash !== "") return "the agent card URL must not have a fragment";
  return null;
}
