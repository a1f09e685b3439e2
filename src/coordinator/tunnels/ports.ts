/**
 * MCP tunnels (SDK `beta.tunnels`): a tunnel is a hostname whose MCP traffic a connector running in
 * a private network carries, authenticated by the tunnel's connector token. The token is kept
 * sealed (reveal must answer it) and hashed (a connecting connector is found by its hash). A
 * tunnel's CA certificates say which MCP servers the connector may trust.
 */
import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { Page } from "../../kernel/pagination.js";

export interface TunnelRecord {
  id: string;
  workspaceId: string;
  displayName: string | null;
  domain: string;
  /** `tnltok_…`: identifies the current token value; changes on rotation. */
  tokenId: string;
  /** SHA-256 (hex) of the current token: what a connector is looked up by. */
  tokenHash: string;
  /** The current token, sealed under the master key (`sealed1:…`), bound to the tunnel and token id. */
  tokenSealed: string;
  createdAt: number;
  archivedAt: number | null;
}

export interface TunnelCertificateRecord {
  id: string;
  workspaceId: string;
  tunnelId: string;
  /** The CA certificate, re-encoded as one PEM block (public material). */
  pem: string;
  /** Lowercase hex SHA-256 of the DER encoding. */
  fingerprint: string;
  expiresAt: number | null;
  createdAt: number;
  archivedAt: number | null;
}

export interface TunnelListQuery {
  limit: number;
  cursor: string | null;
  includeArchived: boolean;
}

/** The tunnel store; every change writes its admin audit entry in the same transaction. */
export interface TunnelStore {
  create(record: TunnelRecord, audit: AdminAuditEntry): Promise<void>;
  get(workspaceId: string, id: string): Promise<TunnelRecord | null>;
  /** A live (not archived) tunnel by its token's hash, in any workspace: the connector's door. */
  findLiveByTokenHash(tokenHash: string): Promise<TunnelRecord | null>;
  /** The tunnel of a workspace whose domain is `domain` (archived or not), or null. */
  findByDomain(workspaceId: string, domain: string): Promise<TunnelRecord | null>;
  list(workspaceId: string, query: TunnelListQuery): Promise<Page<TunnelRecord>>;
  /** Archives the tunnel and its live certificates; false when it was already archived (or absent). */
  archive(workspaceId: string, id: string, at: number, audit: AdminAuditEntry): Promise<boolean>;
  /** Replaces the token of a live tunnel; false when it is archived (or absent). */
  rotateToken(
    workspaceId: string,
    id: string,
    token: { tokenId: string; tokenHash: string; tokenSealed: string },
    audit: AdminAuditEntry,
  ): Promise<boolean>;

  /**
   * Adds a certificate to a live tunnel holding fewer than `maxLive` live ones (under the tunnel's
   * lock): `added`, or why not.
   */
  addCertificate(
    record: TunnelCertificateRecord,
    maxLive: number,
    audit: AdminAuditEntry,
  ): Promise<"added" | "tunnel_missing" | "tunnel_archived" | "full">;
  getCertificate(workspaceId: string, tunnelId: string, id: string): Promise<TunnelCertificateRecord | null>;
  listCertificates(
    workspaceId: string,
    tunnelId: string,
    query: TunnelListQuery,
  ): Promise<Page<TunnelCertificateRecord>>;
  /** The certificates a connector trusts now (not archived), oldest first. */
  liveCertificates(tunnelId: string): Promise<TunnelCertificateRecord[]>;
  /** An audit entry for an act that changes no row (a reveal). */
  recordAudit(audit: AdminAuditEntry): Promise<void>;
  archiveCertificate(
    workspaceId: string,
    tunnelId: string,
    id: string,
    at: number,
    audit: AdminAuditEntry,
  ): Promise<boolean>;
}
