/**
 * The run's side of vault `environment_variable` credentials (wire §5): which of them the session
 * pinned (secret-free, from custody), how the sandbox's egress proxy opens one (through admission,
 * under this run's claim, never after it was lost), and the `session.error`s
 * (`credential_host_unreachable_error`) a Hand tool call commits with its result. The sandbox
 * reports what it found (sandbox/secretReach.ts and egressProxy.ts); this turns it into facts:
 *
 * - at realization, a credential the sandbox can never use (hosts the environment's networking
 *   forbids, or any credential on the `none` tier, which has no egress proxy and so never sets the
 *   variable): once per session and credential;
 * - at request time, each host a credential allows that the proxy refused during the call.
 *
 * The error does not end the turn (`retry_status: retrying`: the run goes on; the model reads the
 * command's own output, e.g. the proxy's 403).
 */

import type { TypedFact } from "../coordinator/factVocabulary.js";
import type { Activation, PinnedSecretVariable, SecretOpening } from "../coordinator/ports.js";
import type { SandboxCredentials, SandboxSpec } from "../sandbox/ports.js";
import { sessionError } from "./modelFacts.js";
import type { RuntimePorts } from "./ports.js";

export const CREDENTIAL_HOST_UNREACHABLE = "credential_host_unreachable_error";

export class SecretEgress {
  private variables: PinnedSecretVariable[] | null = null;
  /** What the sandbox reported since the last tool result: unusable credentials, refused hosts. */
  private unusable: { secretName: string; reason: string }[] = [];
  private refused: { secretName: string; host: string; reason: string }[] = [];
  private closed = false;

  constructor(
    private readonly ports: RuntimePorts,
    private readonly activation: Activation,
    private readonly signal: AbortSignal,
  ) {}

  /** `spec` with the session's credentials (as the proxy needs them), when it pinned any. */
  async withCredentials(spec: SandboxSpec): Promise<SandboxSpec> {
    const port = this.ports.credentials;
    if (!port?.secretVariables || !port.openSecret) return spec;
    const a = this.activation;
    // The claim goes along: a remote worker's coordinator answers only while it is live (a lost
    // claim throws here after the run's signal was aborted, so the caller ends the slice as lost).
    this.variables ??= await port.secretVariables({
      workspaceId: a.workspaceId,
      sessionId: a.sessionId,
      runId: a.runId,
      owner: a.owner,
      epoch: a.epoch,
    });
    if (this.variables.length === 0) return spec;
    const credentials: SandboxCredentials = {
      variables: this.variables.map(({ secretName, networking, injection }) => ({
        secretName,
        networking,
        injection,
      })),
      open: (secretName) => this.open(secretName),
      onHostRefused: (secretName, host, reason) => {
        if (!this.closed) this.refused.push({ secretName, host, reason });
      },
      onUnusable: (secretName, reason) => {
        if (!this.closed) this.unusable.push({ secretName, reason });
      },
    };
    return { ...spec, credentials };
  }

  /** No secret opens any more (the run slice ended): a later run binds its own. */
  close(): void {
    this.closed = true;
  }

  /**
   * The `credential_host_unreachable_error`s to commit with a Hand tool call's result: the static
   * ones this session has not committed yet, then the refusals seen during the call (once per
   * credential and host).
   */
  takeErrors(now: number, history: readonly TypedFact[]): TypedFact[] {
    const { unusable, refused } = this;
    this.unusable = [];
    this.refused = [];
    const variables = this.variables ?? [];
    const reported = new Set<string>();
    for (const fact of history) {
      if (fact.kind !== "error" || fact.errorType !== CREDENTIAL_HOST_UNREACHABLE) continue;
      const credentialId = fact.extra.credential_id;
      if (typeof credentialId === "string") reported.add(credentialId);
    }
    const facts: TypedFact[] = [];
    const seen = new Set<string>();
    const add = (secretName: string, key: string, message: (v: PinnedSecretVariable) => string) => {
      const variable = variables.find((v) => v.secretName === secretName);
      if (!variable || seen.has(key)) return;
      seen.add(key);
      facts.push(
        sessionError(now, CREDENTIAL_HOST_UNREACHABLE, message(variable), "retrying", {
          credential_id: variable.credentialId,
          vault_id: variable.vaultId,
        }),
      );
    };
    for (const entry of unusable) {
      const variable = variables.find((v) => v.secretName === entry.secretName);
      if (!variable || reported.has(variable.credentialId)) continue;
      add(
        entry.secretName,
        `unusable\n${entry.secretName}`,
        (v) => `credential ${v.credentialId}: ${entry.reason}`,
      );
    }
    for (const entry of refused) {
      add(
        entry.secretName,
        `refused\n${entry.secretName}\n${entry.host}`,
        (v) =>
          `a request to ${entry.host}, a host credential ${v.credentialId} (${v.secretName}) is for, was refused by the environment's networking: ${entry.reason}`,
      );
    }
    return facts;
  }

  private async open(secretName: string): Promise<Buffer | null> {
    const port = this.ports.credentials;
    if (!port?.openSecret || this.closed || this.signal.aborted) return null;
    const a = this.activation;
    let opening: SecretOpening;
    try {
      opening = await port.openSecret({
        workspaceId: a.workspaceId,
        sessionId: a.sessionId,
        runId: a.runId,
        owner: a.owner,
        epoch: a.epoch,
        holder: "egress_proxy",
        secretName,
      });
    } catch (error) {
      // Custody (or, on a remote worker, the coordinator) could not answer, or found the claim
      // lost (the run's signal is aborted by then). The proxy refuses the request with its 403
      // instead of dropping the connection; errors carry ids and reasons, never material.
      this.ports.log.warn(
        { runId: a.runId, secretName, error: error instanceof Error ? error.message : String(error) },
        "credential could not be opened for the egress proxy",
      );
      return null;
    }
    if (opening.kind === "refused") {
      this.ports.log.warn(
        { runId: a.runId, credentialId: opening.credentialId, reason: opening.reason },
        "credential refused for the egress proxy",
      );
    }
    if (opening.kind !== "secret") return null;
    // A claim lost while custody answered: the material is zeroed, never used.
    if (this.closed || this.signal.aborted) {
      opening.value.fill(0);
      return null;
    }
    return opening.value;
  }
}
