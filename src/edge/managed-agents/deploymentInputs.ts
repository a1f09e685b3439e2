import type { DeploymentSessionInputs } from "../../deployments/ports.js";
import type { ManagedAgentsDeps } from "./edgeDeps.js";
import { readRubricFiles, rubricFileReader } from "./outcomeRubrics.js";
import { toDomainInputs } from "./routes/userInputs.js";
import { toResourceRequest } from "./schemas/sessionResources.js";

type WireResource = Parameters<typeof toResourceRequest>[0];

/**
 * A deployment's initial events and resources as `POST /v1/sessions` turns its own into a session's
 * inputs: the same conversion, so a deployment's session is an ordinary session. `deps` is read
 * per call (the services are composed after this is made).
 */
export function deploymentSessionInputs(
  deps: () => Pick<ManagedAgentsDeps, "resources">,
): DeploymentSessionInputs {
  return {
    async initialInputs(workspaceId, events) {
      const wire = events as ReadonlyArray<{ type: string }>;
      // A rubric file scoped to a session cannot be a deployment's (its sessions do not exist yet).
      const reader = rubricFileReader(deps() as ManagedAgentsDeps, workspaceId, null);
      return toDomainInputs(wire, await readRubricFiles(wire as never, reader));
    },
    resources: (resources) => (resources as WireResource[]).map(toResourceRequest),
  };
}
