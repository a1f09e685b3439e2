import type { FastifyBaseLogger } from "fastify";
import type { TunnelRelay } from "../../coordinator/tunnels/tunnelRelay.js";
import type { WorkerTransport } from "../../worker/ports.js";
import {
  MAX_WIRE_TUNNEL_BODY_BYTES,
  type WorkerRequest,
  type WorkerResponse,
} from "../../worker/transportWire.js";
import { checkClaim, type RunSessionLookup } from "./credentialRoute.js";

export interface TunnelRouteDeps {
  relay: Pick<TunnelRelay, "fetch">;
  runSession: RunSessionLookup;
}

export interface TunnelRouteContext {
  renew: WorkerTransport["renew"];
  leaseMs: number;
  deps: TunnelRouteDeps;
  log: FastifyBaseLogger;
}

/**
 * A remote run's MCP request through a tunnel: the claim is checked live first (`checkClaim`: this
 * owner's live claim, at this epoch, on a run of the session and workspace named), then the relay
 * carries it for that workspace only, and the whole answer goes back. A failure of the tunnel (none
 * with that domain, archived, no certificate, no connector, the connector's refusal) is `failed`
 * with the relay's message, which the worker's MCP client reports as its connection failure.
 */
export async function tunnelFetchForRemoteRun(
  context: TunnelRouteContext,
  request: WorkerRequest<"tunnelFetch">,
): Promise<WorkerResponse<"tunnelFetch">> {
  const lost = await checkClaim(
    context.renew,
    context.leaseMs,
    context.deps.runSession,
    request,
    context.log,
  );
  if (lost) return lost;
  try {
    const response = await context.deps.relay.fetch(request.workspaceId, request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === null ? {} : { body: Buffer.from(request.body, "base64") }),
    });
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > MAX_WIRE_TUNNEL_BODY_BYTES) {
      return {
        kind: "failed",
        message: `the MCP server's answer exceeds ${MAX_WIRE_TUNNEL_BODY_BYTES} bytes`,
      };
    }
    return {
      kind: "response",
      status: response.status,
      headers: [...response.headers.entries()],
      body: body.toString("base64"),
    };
  } catch (error) {
    return {
      kind: "failed",
      message: (error instanceof Error ? error.message : String(error)).slice(0, 4_000),
    };
  }
}
