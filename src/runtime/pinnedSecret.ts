/**
 * Opening one of the session's pinned vault secrets for a process the run starts (a stdio MCP
 * server, an ACP harness): through custody, under the run's claim, for one holder and one name.
 * The answer is text for that one start (the custody buffer is zeroed), or why not, in words the
 * caller puts in its own error; the caller says what the secret was for.
 */

import type { SecretHolderKind, SecretOpening } from "../coordinator/ports.js";
import type { RunContext } from "./runContext.js";

export type PinnedSecret =
  | { kind: "value"; value: string }
  /** `auth`: nothing pinned, or the pin refused; `unavailable`: custody could not answer. */
  | { kind: "refused"; reason: "auth" | "unavailable"; message: string }
  | { kind: "lost" };

export async function openPinnedSecret(
  run: RunContext,
  holder: Extract<SecretHolderKind, "mcp_process" | "acp_harness">,
  secretName: string,
  /** What names the secret, for the "pinned none" advice (e.g. `env.NOTES_TOKEN`). */
  usedBy: string,
): Promise<PinnedSecret> {
  const port = run.ports.credentials;
  if (!port?.openSecret)
    return {
      kind: "refused",
      reason: "auth",
      message: `${usedBy} names vault secret ${secretName}, and this worker cannot open vault secrets`,
    };
  if (run.signal.aborted) return { kind: "lost" };
  const a = run.activation;
  let opening: SecretOpening;
  try {
    opening = await port.openSecret({
      workspaceId: a.workspaceId,
      sessionId: a.sessionId,
      runId: a.runId,
      owner: a.owner,
      epoch: a.epoch,
      holder,
      secretName,
    });
  } catch (error) {
    // Custody (or a remote worker's coordinator) could not answer, or found the claim lost.
    if (run.signal.aborted) return { kind: "lost" };
    const message = error instanceof Error ? error.message : String(error);
    return {
      kind: "refused",
      reason: "unavailable",
      message: `vault secret ${secretName} could not be opened: ${message}`,
    };
  }
  if (opening.kind === "none")
    return {
      kind: "refused",
      reason: "auth",
      message:
        `${usedBy} names vault secret ${secretName}, and the session pinned none: attach a vault ` +
        `with an environment_variable credential whose secret_name is ${secretName}`,
    };
  if (opening.kind === "refused")
    return {
      kind: "refused",
      reason: "auth",
      message: `the credential pinned for ${secretName} (${opening.credentialId}, revision ${opening.revision}) was refused: ${opening.reason}`,
    };
  try {
    if (run.signal.aborted) return { kind: "lost" };
    return { kind: "value", value: opening.value.toString("utf8") };
  } finally {
    opening.value.fill(0);
  }
}
