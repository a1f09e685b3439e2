/**
 * MCP server URLs in a tunnel's domain are never dialled: their requests go to the coordinator's
 * tunnel relay, which carries them over the connector of the run's own workspace's tunnel. Every
 * other URL goes through the outbound connector and its address policy, unchanged. A host in the
 * tunnel name space is never resolved (it could not resolve anyway: the suffix is `.invalid`).
 */

import type { Outbound } from "../../kernel/outboundConnector.js";
import { isTunnelHost } from "../../kernel/tunnelDomains.js";

/** The run a tunnelled request is made for: its workspace's tunnels only, under its live claim. */
export interface TunnelClaim {
  workspaceId: string;
  sessionId: string;
  runId: string;
  owner: string;
  epoch: number;
}

/**
 * The coordinator's relay as a run reaches it: in process, the relay itself; on a remote worker,
 * over the worker transport, the coordinator checking the claim first.
 */
export interface TunnelRelayPort {
  fetch(claim: TunnelClaim, url: string | URL, init?: RequestInit): Promise<Response>;
}

function hostOf(url: string | URL): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

export function tunnelRouted(
  outbound: Outbound,
  relay: TunnelRelayPort | undefined,
  claim: TunnelClaim,
): Outbound {
  const tunnelled = (url: string | URL) => {
    const host = hostOf(url);
    return host !== null && isTunnelHost(host);
  };
  return {
    admit: (url) => (tunnelled(url) ? Promise.resolve(null) : outbound.admit(url)),
    fetch: (url, init) => {
      if (!tunnelled(url)) return outbound.fetch(url, init);
      if (!relay) {
        return Promise.reject(
          new Error("this worker has no way to a tunnel relay: MCP tunnels cannot be reached from it"),
        );
      }
      return relay.fetch(claim, url, init);
    },
  };
}
