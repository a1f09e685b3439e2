import type { FastifyBaseLogger } from "fastify";
import type {
  CredentialOpening,
  CredentialOpenRequest,
  PinnedSecretVariable,
  SecretOpening,
  SecretOpenRequest,
} from "../../coordinator/ports.js";
import type { WorkerTransport } from "../../worker/ports.js";
import type { WorkerRequest, WorkerResponse } from "../../worker/transportWire.js";

/** Control's custody (`CredentialCustody.open`): admission of the session's pin, then the one field. */
export interface CredentialOpener {
  open(request: CredentialOpenRequest): Promise<CredentialOpening>;
  /** The session's pinned `environment_variable` credentials, secret-free (secretRoute.ts). */
  secretVariables(scope: { workspaceId: string; sessionId: string }): Promise<PinnedSecretVariable[]>;
  /** One pinned `environment_variable` secret for the egress proxy, after admission (audited). */
  openSecret(request: SecretOpenRequest): Promise<SecretOpening>;
}

/** The session (and its workspace) a run belongs to, or null when there is no such run. */
export type RunSessionLookup = (runId: string) => Promise<{ sessionId: string; workspaceId: string } | null>;

export interface CredentialRouteDeps {
  custody: CredentialOpener;
  runSession: RunSessionLookup;
}

type Answer = WorkerResponse<"openCredential">;

/**
 * A remote worker's last-mile holder asks for its session's pinned credential.
 *
 * Why sending material to a remote worker is acceptable: the remote worker IS the last-mile holder
 * process, exactly as the in-process worker is for `awaken up`: its MCP connection has to put the
 * bearer on the wire to the MCP server, so it must hold the token for that connection anyway. What
 * the coordinator keeps is the decision: the claim must be live, the pin is the session's own
 * (never a replacement), admission and audit run here, next to the store. The worker token is all
 * that authenticates the worker, and the token travels in this response: run the worker transport
 * over TLS (an `https://` coordinator URL, e.g. behind a terminating proxy) or on a private network
 * in production, as for the rest of the transport (which carries session history and commits).
 *
 * Order: the claim first, through the renew route's own check (one conditional UPDATE: this owner,
 * this epoch, `claimed`, lease unexpired; extending the lease of a run its holder is working on is
 * what renew does anyway), then that the run is one of the session named (so the audit's who and
 * whose always agree). A failed check answers `claim_lost` having opened and audited nothing: the
 * worker aborts that run as it would after a failed renew.
 *
 * The material: custody's Buffer is base64-encoded into the answer and zeroed at once. The string
 * (and the serialized body) cannot be zeroed; it lives until garbage collection, like the bearer
 * header the in-process holder builds. Request logging is off (`httpServer.ts`) and no log line or
 * error here carries the opening; refusal reasons are custody's secret-free ones.
 */
export async function openForRemoteHolder(
  renew: WorkerTransport["renew"],
  leaseMs: number,
  deps: CredentialRouteDeps,
  request: WorkerRequest<"openCredential">,
  log: FastifyBaseLogger,
): Promise<Answer> {
  const lost = await checkClaim(renew, leaseMs, deps.runSession, request, log);
  if (lost) return lost;
  return toWire(await deps.custody.open(request));
}

/** The claim a remote holder names: the session it asks about, and the run, owner and epoch it holds. */
export interface NamedClaim {
  workspaceId: string;
  sessionId: string;
  runId: string;
  owner: string;
  epoch: number;
}

export type ClaimLost = { kind: "claim_lost"; reason: string };

/**
 * The check every credential route of a remote holder makes before it reads, opens or audits
 * anything (why and in which order: `openForRemoteHolder`): null when the claim is live and a
 * claim on the session named, else the `claim_lost` answer.
 */
export async function checkClaim(
  renew: WorkerTransport["renew"],
  leaseMs: number,
  runSession: RunSessionLookup,
  claim: NamedClaim,
  log: FastifyBaseLogger,
): Promise<ClaimLost | null> {
  const { runId, owner, epoch } = claim;
  if (!(await renew(runId, owner, epoch, leaseMs))) {
    return {
      kind: "claim_lost",
      reason: `run ${runId} is not claimed by ${owner} at epoch ${epoch} with a live lease`,
    };
  }
  const run = await runSession(runId);
  if (!run || run.sessionId !== claim.sessionId || run.workspaceId !== claim.workspaceId) {
    // A worker holding one claim asked for another session's credential: a bug or an abuse of the
    // worker token. Refused like a lost claim, and logged (ids only).
    log.warn(
      { runId, owner, epoch, sessionId: claim.sessionId, workspaceId: claim.workspaceId },
      "worker request refused: the claim named is not a claim on that session",
    );
    return { kind: "claim_lost", reason: `run ${runId} is not a run of session ${claim.sessionId}` };
  }
  return null;
}

function toWire(opening: CredentialOpening): Answer {
  switch (opening.kind) {
    case "none":
    case "refused":
      return opening;
    case "bearer":
      return {
        kind: "bearer",
        token: base64ThenZeroed(opening.token),
        credentialId: opening.credentialId,
        revision: opening.revision,
      };
    default:
      // A new opening kind must be given its wire form here (credentialWire.ts), not passed through.
      return noWireForm("credential", opening);
  }
}

/**
 * Custody's Buffer as the base64 that crosses the transport, zeroed as soon as it is encoded (the
 * string cannot be: it lives until garbage collection, like the bearer header an in-process holder
 * builds). Every remote credential route sends material through here.
 */
export function base64ThenZeroed(material: Buffer): string {
  try {
    return material.toString("base64");
  } finally {
    material.fill(0);
  }
}

/** A new opening kind must be given its wire form, never passed through as it is. */
export function noWireForm(what: string, opening: never): never {
  throw new Error(`${what} opening of kind ${(opening as { kind: string }).kind} has no wire form`);
}
