import type { FastifyBaseLogger } from "fastify";
import type { PinnedSecretVariable, SecretOpening } from "../../coordinator/ports.js";
import type { WorkerTransport } from "../../worker/ports.js";
import type { WorkerRequest, WorkerResponse } from "../../worker/transportWire.js";
import {
  base64ThenZeroed,
  type ClaimLost,
  type CredentialRouteDeps,
  checkClaim,
  type NamedClaim,
  noWireForm,
} from "./credentialRoute.js";

/**
 * A remote worker's sandbox asks for its session's pinned `environment_variable` credentials: the
 * list its sandbox is set up from (placeholders), then, from its egress proxy, one secret at a time
 * to substitute into a request. Same reasoning as `openForRemoteHolder` (credentialRoute.ts): the
 * remote worker's egress proxy IS the last-mile holder (it has to put the secret on the wire to the
 * allowed host, as the in-process proxy does); the coordinator keeps the decision (live claim, the
 * session's own pin, admission, audit). Both routes check the claim first, with the same check, and
 * answer `claim_lost` having read, opened and audited nothing otherwise.
 */
export interface SecretRouteContext {
  renew: WorkerTransport["renew"];
  leaseMs: number;
  deps: CredentialRouteDeps;
  log: FastifyBaseLogger;
}

/** The session's pinned variables, secret-free, rebuilt field by field (nothing else can ride along). */
export async function secretVariablesForRemoteHolder(
  context: SecretRouteContext,
  request: WorkerRequest<"secretVariables">,
): Promise<WorkerResponse<"secretVariables">> {
  const lost = await claimLost(context, request);
  if (lost) return lost;
  const variables = await context.deps.custody.secretVariables({
    workspaceId: request.workspaceId,
    sessionId: request.sessionId,
  });
  return { kind: "variables", variables: variables.map(variableToWire) };
}

/** One pinned secret for the worker's egress proxy: admitted and audited by custody, sent as base64. */
export async function openSecretForRemoteHolder(
  context: SecretRouteContext,
  request: WorkerRequest<"openSecret">,
): Promise<WorkerResponse<"openSecret">> {
  const lost = await claimLost(context, request);
  if (lost) return lost;
  return openingToWire(await context.deps.custody.openSecret(request));
}

/** The claim check of every remote credential route (credentialRoute.ts), first of all. */
function claimLost(context: SecretRouteContext, claim: NamedClaim): Promise<ClaimLost | null> {
  return checkClaim(context.renew, context.leaseMs, context.deps.runSession, claim, context.log);
}

function variableToWire(variable: PinnedSecretVariable): PinnedSecretVariable {
  const { networking, injection } = variable;
  return {
    credentialId: variable.credentialId,
    vaultId: variable.vaultId,
    revision: variable.revision,
    secretName: variable.secretName,
    networking:
      networking.type === "limited"
        ? { type: "limited", allowed_hosts: [...networking.allowed_hosts] }
        : { type: "unrestricted" },
    injection: { header: injection.header, body: injection.body },
  };
}

/** The Buffer is encoded and zeroed at once (`base64ThenZeroed`). */
function openingToWire(opening: SecretOpening): WorkerResponse<"openSecret"> {
  switch (opening.kind) {
    case "none":
    case "refused":
      return opening;
    case "secret":
      return {
        kind: "secret",
        value: base64ThenZeroed(opening.value),
        credentialId: opening.credentialId,
        revision: opening.revision,
      };
    default:
      return noWireForm("secret", opening);
  }
}
