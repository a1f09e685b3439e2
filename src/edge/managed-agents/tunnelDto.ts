import type { TunnelCertificateRecord, TunnelRecord } from "../../coordinator/tunnels/ports.js";
import type { RevealedToken } from "../../coordinator/tunnels/tunnelService.js";
import { isoTime } from "../../kernel/clock.js";

// Projections of tunnels, their tokens and CA certificates to the wire (SDK beta.tunnels types).
// A tunnel's projection never holds its token: only reveal and rotate answer `tunnelTokenDto`.

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

export function tunnelDto(t: TunnelRecord): Record<string, unknown> {
  return {
    id: t.id,
    type: "tunnel",
    display_name: t.displayName,
    domain: t.domain,
    created_at: isoTime(t.createdAt),
    archived_at: iso(t.archivedAt),
  };
}

export function tunnelTokenDto(token: RevealedToken): Record<string, unknown> {
  return { id: token.id, type: "tunnel_token", tunnel_token: token.token };
}

export function tunnelCertificateDto(c: TunnelCertificateRecord): Record<string, unknown> {
  return {
    id: c.id,
    type: "tunnel_certificate",
    tunnel_id: c.tunnelId,
    fingerprint: c.fingerprint,
    expires_at: iso(c.expiresAt),
    created_at: isoTime(c.createdAt),
    archived_at: iso(c.archivedAt),
  };
}
