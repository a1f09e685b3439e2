/**
 * Where MCP tunnels live in the name space. Each tunnel is given `<label>.tunnels.awaken.invalid`;
 * an MCP server URL whose host is a subdomain of that (`<route>.<label>.tunnels.awaken.invalid`)
 * is carried through the tunnel's connector instead of being dialled. `.invalid` is reserved
 * (RFC 2606): such a name never resolves, so a URL meant for a tunnel can never reach anything else.
 */
export const TUNNEL_DOMAIN_SUFFIX = "tunnels.awaken.invalid";

/** A URL host routed through a tunnel: the tunnel's domain and the route the connector looks up. */
export interface TunnelAddress {
  /** The tunnel's domain (`<label>.tunnels.awaken.invalid`). */
  domain: string;
  /** The labels before the domain (`mcp` in `mcp.<label>.tunnels.awaken.invalid`). */
  route: string;
}

/** The tunnel a host names, or null for any host outside the tunnel name space. */
export function tunnelAddressOf(hostname: string): TunnelAddress | null {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  const suffix = `.${TUNNEL_DOMAIN_SUFFIX}`;
  if (!host.endsWith(suffix)) return null;
  const labels = host.slice(0, -suffix.length).split(".");
  const label = labels.pop();
  if (!label || labels.length === 0 || labels.some((l) => l === "")) return null;
  return { domain: `${label}${suffix}`, route: labels.join(".") };
}

/** True for a host inside the tunnel name space (even one naming no tunnel): never dialled. */
export function isTunnelHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === TUNNEL_DOMAIN_SUFFIX || host.endsWith(`.${TUNNEL_DOMAIN_SUFFIX}`);
}
