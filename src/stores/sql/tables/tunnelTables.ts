/** MCP tunnels' tables (coordinator/tunnels), part of `Database` (schema.ts). Migration 034. */
export interface TunnelTables {
  tunnels: {
    id: string;
    workspace_id: string;
    display_name: string | null;
    domain: string;
    token_id: string;
    /** SHA-256 (hex) of the connector token; the token itself only sealed, never in plaintext. */
    token_hash: string;
    token_sealed: string;
    created_at: number;
    archived_at: number | null;
  };
  tunnel_certificates: {
    id: string;
    workspace_id: string;
    tunnel_id: string;
    pem: string;
    fingerprint: string;
    expires_at: number | null;
    created_at: number;
    archived_at: number | null;
  };
}
