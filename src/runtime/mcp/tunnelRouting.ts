/**
 * MCP server URLs in a tunnel's domain are never dialled: their requests go to the coordinator's
 * tunnel relay, which carries them over the connector of the run's own workspace's tunnel. Every
 * other URL goes through the outbound connector and its address policy, unchanged. A host in the
 * tunnel name space is never resolved (it could not resolve anyway: the suffix is `.invalid`).
 */

import type { Outbound } from "../../kernel/outboundConnector.js";
import { isTunnelHost } from "../../kernel/tunnelDomains.js";

/** The coordinator's relay as a run reaches it (in process: the relay itself). */
export interface TunnelRelayPort {
  fetch(workspaceId: string, url: string | URL, init?: RequestInit): Promise<Response>;
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
  workspaceId: string,
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
          new Error(
            "MCP tunnels are carried by the coordinator's in-process workers only; this worker cannot reach one",
          ),
        );
      }
      return relay.fetch(workspaceId, url, init);
    },
  };
}
