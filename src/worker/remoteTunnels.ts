/**
 * The runtime's tunnel relay on a remote worker: a run's MCP request to a URL in a tunnel's domain
 * crosses the worker transport naming the run's claim; the coordinator checks the claim and carries
 * it through its relay (edge/worker-transport/tunnelRoute.ts). Exchanges are whole (tunnelWire.ts):
 * the standalone event stream an MCP client opens with GET is answered 405 here, which Streamable
 * HTTP allows a server to answer, so the client goes on without it.
 */
import type { TunnelClaim, TunnelRelayPort } from "../runtime/mcp/tunnelRouting.js";
import type { WorkerRequest, WorkerResponse } from "./transportWire.js";

/** What this relay needs of the transport (`HttpWorkerTransport.tunnelCall`). */
export interface TunnelTransport {
  tunnelCall(request: WorkerRequest<"tunnelFetch">): Promise<WorkerResponse<"tunnelFetch">>;
}

export class RemoteTunnelRelay implements TunnelRelayPort {
  constructor(private readonly transport: TunnelTransport) {}

  async fetch(claim: TunnelClaim, url: string | URL, init: RequestInit = {}): Promise<Response> {
    const method = (init.method ?? "GET").toUpperCase();
    if (method === "GET") return new Response(null, { status: 405, headers: { allow: "POST, DELETE" } });
    const body =
      init.body === undefined || init.body === null
        ? null
        : Buffer.from(await new Response(init.body).arrayBuffer()).toString("base64");
    init.signal?.throwIfAborted();
    const answer = await this.transport.tunnelCall({
      workspaceId: claim.workspaceId,
      sessionId: claim.sessionId,
      runId: claim.runId,
      owner: claim.owner,
      epoch: claim.epoch,
      url: String(url),
      method,
      headers: [...new Headers(init.headers).entries()],
      body,
    });
    if (answer.kind === "claim_lost") throw new Error(`claim lost: ${answer.reason}`);
    if (answer.kind === "failed") throw new Error(answer.message);
    const bytes = Buffer.from(answer.body, "base64");
    const empty = answer.status === 204 || answer.status === 304 || answer.status === 205;
    return new Response(empty ? null : bytes, { status: answer.status, headers: answer.headers });
  }
}
