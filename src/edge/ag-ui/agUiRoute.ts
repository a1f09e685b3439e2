import type { FastifyInstance, FastifyRequest } from "fastify";
import { principalOf } from "../http/auth.js";
import type { CredentialDeps } from "../http/credentialLifetime.js";
import type { AgUiPorts } from "./agUiPorts.js";
import { runAgUi } from "./agUiRun.js";
import { openEventStream } from "./agUiStream.js";
import { parseRunInput } from "./runInput.js";

/**
 * `POST /v1/ag-ui/agents/:agentId`: one AG-UI run. What fails before the stream opens (a body that
 * is not a RunAgentInput, an unknown agent) throws, and the scope answers it as an HTTP error;
 * from RUN_STARTED on, failures are RUN_ERROR events.
 */
export function agUiRoutes(
  app: FastifyInstance,
  portsFor: (request: FastifyRequest) => AgUiPorts,
  auth: CredentialDeps,
): void {
  app.post<{ Params: { agentId: string } }>("/v1/ag-ui/agents/:agentId", async (request, reply) => {
    // Ports narrowed to the caller's scope: an agent or thread outside it is not found.
    const ports = portsFor(request);
    const { workspaceId } = principalOf(request);
    const input = parseRunInput(request.body);
    const agentId = request.params.agentId;
    // Checked before the stream opens, so an unknown agent is a 404 the client can tell apart.
    await ports.agentDefinition(workspaceId, agentId);
    const sink = openEventStream(request, reply, ports.pingMs, auth);
    try {
      await runAgUi(
        ports,
        {
          workspaceId,
          agentId,
          input,
          logFailure: (error) => request.log.error({ err: error }, "ag-ui run failed"),
        },
        sink,
      );
    } finally {
      sink.end();
    }
  });
}
