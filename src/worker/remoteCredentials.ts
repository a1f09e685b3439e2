import type {
  CredentialOpening,
  CredentialOpenRequest,
  PinnedSecretVariable,
  SecretOpening,
  SecretOpenRequest,
  SecretVariablesRequest,
} from "../coordinator/ports.js";
import { PlatformError } from "../kernel/errors.js";
import type { CredentialHolderPort } from "../runtime/ports.js";
import type { CredentialOpenWireResponse } from "./credentialWire.js";
import type { SecretOpenWireResponse, SecretVariablesWireResponse } from "./secretWire.js";

/** What this port needs of the transport (`HttpWorkerTransport`'s claim-checked credential calls). */
export interface CredentialOpenTransport {
  openCredential(request: CredentialOpenRequest): Promise<CredentialOpenWireResponse>;
  secretVariables(request: SecretVariablesRequest): Promise<SecretVariablesWireResponse>;
  openSecret(request: SecretOpenRequest): Promise<SecretOpenWireResponse>;
}

/** The coordinator found the claim the open named not live: the run is lost, nothing was opened. */
export class CredentialClaimLost extends PlatformError {
  constructor(runId: string, reason: string) {
    super("claim_lost", `credential not opened for run ${runId}: the claim is lost (${reason})`);
    this.name = "CredentialClaimLost";
  }
}

/**
 * The runtime's `credentials` port on a remote worker: the coordinator keeps custody (live claim,
 * the session's pin, admission, audit) and answers with the opening; this process is the last-mile
 * holder, like the in-process worker of `awaken up`. The bearer arrives as base64 and is handed on
 * as a Buffer that its holder (the MCP connection, `runtime/mcp/mcpSessions.ts`) zeroes once it
 * built its header, exactly as in process. The base64 string itself cannot be zeroed (JSON carries
 * text); nothing here logs it or puts it in an error.
 *
 * `environment_variable` credentials take the same path: the secret-free list the sandbox is set
 * up from (placeholders), and each secret, as a Buffer, for the sandbox's egress proxy, which
 * zeroes it once substituted (`sandbox/egressForward.ts`), as in process.
 *
 * A lost claim is thrown (`CredentialClaimLost`) after the transport already aborted the run's
 * signal, so the runtime ends the slice as lost, as after a failed renew, and writes nothing.
 */
export class RemoteCredentialHolder implements CredentialHolderPort {
  constructor(private readonly transport: CredentialOpenTransport) {}

  async open(request: CredentialOpenRequest): Promise<CredentialOpening> {
    const answer = await this.transport.openCredential(request);
    switch (answer.kind) {
      case "none":
      case "refused":
        return answer;
      case "bearer":
        return {
          kind: "bearer",
          token: Buffer.from(answer.token, "base64"),
          credentialId: answer.credentialId,
          revision: answer.revision,
        };
      case "claim_lost":
        throw new CredentialClaimLost(request.runId, answer.reason);
    }
  }

  async secretVariables(request: SecretVariablesRequest): Promise<PinnedSecretVariable[]> {
    const answer = await this.transport.secretVariables(request);
    if (answer.kind === "claim_lost") throw new CredentialClaimLost(request.runId, answer.reason);
    return answer.variables;
  }

  async openSecret(request: SecretOpenRequest): Promise<SecretOpening> {
    const answer = await this.transport.openSecret(request);
    switch (answer.kind) {
      case "none":
      case "refused":
        return answer;
      case "secret":
        return {
          kind: "secret",
          value: Buffer.from(answer.value, "base64"),
          credentialId: answer.credentialId,
          revision: answer.revision,
        };
      case "claim_lost":
        throw new CredentialClaimLost(request.runId, answer.reason);
    }
  }
}
