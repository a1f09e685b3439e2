/**
 * MCP tunnels and their CA certificates (SDK `beta.tunnels`): create, read, list, archive, reveal
 * and rotate the connector token, and the certificates a tunnel trusts. Every change is audited
 * (never the token: a reveal's or a rotation's entry names only the token's id). Archiving or
 * rotating tells the relay at once, so a connector holding an old token is refused from then on.
 */
import { randomBytes } from "node:crypto";
import {
  type Actor,
  type AuditAction,
  type AuditResourceType,
  auditEntry,
} from "../../control/adminAudit.js";
import type { Clock } from "../../kernel/clock.js";
import { AwakenError, invalid, notFound } from "../../kernel/errors.js";
import { newId } from "../../kernel/ids.js";
import type { Page } from "../../kernel/pagination.js";
import { TUNNEL_DOMAIN_SUFFIX } from "../../kernel/tunnelDomains.js";
import { parseCaCertificate } from "./caCertificate.js";
import type { TunnelCertificateRecord, TunnelListQuery, TunnelRecord, TunnelStore } from "./ports.js";
import {
  newTunnelToken,
  openTunnelToken,
  sealTunnelToken,
  type TunnelTokenSealer,
  tunnelTokenHash,
} from "./tunnelTokens.js";

/** A tunnel holds at most two non-archived certificates (SDK: room to roll one over). */
export const MAX_LIVE_CERTIFICATES = 2;

export interface RevealedToken {
  id: string;
  token: string;
}

/** What the relay must hear about: a tunnel whose live connection may no longer stay. */
export interface TunnelChanges {
  archived(tunnelId: string): void;
}

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/** A fresh label (26 base32 characters, 130 random bits): a domain is never allocated twice. */
function newDomain(): string {
  const bytes = randomBytes(26);
  let label = "";
  for (const b of bytes) label += CROCKFORD[b % 32];
  return `${label}.${TUNNEL_DOMAIN_SUFFIX}`;
}

/** The secret-free view an audit entry digests. */
const auditView = (t: TunnelRecord) => ({
  id: t.id,
  display_name: t.displayName,
  domain: t.domain,
  token_id: t.tokenId,
  archived_at: t.archivedAt,
});

export class TunnelService {
  constructor(
    private readonly store: TunnelStore,
    private readonly sealer: TunnelTokenSealer,
    private readonly clock: Clock,
    private readonly changes: TunnelChanges = { archived: () => {} },
  ) {}

  async create(by: Actor, input: { displayName: string | null }): Promise<TunnelRecord> {
    const now = this.clock.now();
    const id = newId("tnl", now);
    const tokenId = newId("tnltok", now);
    const token = newTunnelToken();
    const record: TunnelRecord = {
      id,
      workspaceId: by.workspaceId,
      displayName: input.displayName,
      domain: newDomain(),
      tokenId,
      tokenHash: tunnelTokenHash(token),
      tokenSealed: await sealTunnelToken(
        this.sealer,
        { workspaceId: by.workspaceId, tunnelId: id, tokenId },
        token,
      ),
      createdAt: now,
      archivedAt: null,
    };
    await this.store.create(record, this.audit(by, "create", "tunnel", id, null, auditView(record), now));
    return record;
  }

  async get(workspaceId: string, id: string): Promise<TunnelRecord> {
    const tunnel = await this.store.get(workspaceId, id);
    if (!tunnel) throw notFound("tunnel", id);
    return tunnel;
  }

  list(workspaceId: string, query: TunnelListQuery): Promise<Page<TunnelRecord>> {
    return this.store.list(workspaceId, query);
  }

  /** Irreversible; archiving an archived tunnel answers it unchanged (SDK). */
  async archive(by: Actor, id: string): Promise<TunnelRecord> {
    const current = await this.get(by.workspaceId, id);
    if (current.archivedAt !== null) return current;
    const now = this.clock.now();
    const after = { ...current, archivedAt: now };
    const done = await this.store.archive(
      by.workspaceId,
      id,
      now,
      this.audit(by, "archive", "tunnel", id, auditView(current), auditView(after), now),
    );
    this.changes.archived(id);
    return done ? after : this.get(by.workspaceId, id);
  }

  /** The current token (SDK: revealed on each call, the same value until rotated). Audited. */
  async revealToken(by: Actor, id: string): Promise<RevealedToken> {
    const tunnel = await this.liveTunnel(by.workspaceId, id);
    const token = await openTunnelToken(
      this.sealer,
      { workspaceId: tunnel.workspaceId, tunnelId: tunnel.id, tokenId: tunnel.tokenId },
      tunnel.tokenSealed,
    );
    if (token === null) {
      throw new AwakenError(
        "credential_unopenable",
        `the connector token of tunnel ${id} cannot be opened with the master keys this server holds; rotate it`,
      );
    }
    const now = this.clock.now();
    const view = auditView(tunnel);
    await this.store.recordAudit(this.audit(by, "reveal", "tunnel", id, view, view, now));
    return { id: tunnel.tokenId, token };
  }

  /**
   * A fresh token; the old one is refused for new connections at once. A connection made with the
   * old token is not severed (SDK): a connector restarted after rotation must use the new value.
   */
  async rotateToken(by: Actor, id: string, reason: string | null): Promise<RevealedToken> {
    const tunnel = await this.liveTunnel(by.workspaceId, id);
    const now = this.clock.now();
    const tokenId = newId("tnltok", now);
    const token = newTunnelToken();
    const next = {
      tokenId,
      tokenHash: tunnelTokenHash(token),
      tokenSealed: await sealTunnelToken(
        this.sealer,
        { workspaceId: by.workspaceId, tunnelId: id, tokenId },
        token,
      ),
    };
    const rotated = await this.store.rotateToken(
      by.workspaceId,
      id,
      next,
      // The reason is recorded as the audit records everything: inside the digest of the change.
      this.audit(
        by,
        "rotate",
        "tunnel",
        id,
        auditView(tunnel),
        { ...auditView({ ...tunnel, tokenId }), reason },
        now,
      ),
    );
    if (!rotated) throw archivedTunnel(id);
    return { id: tokenId, token };
  }

  async addCertificate(by: Actor, tunnelId: string, pemText: string): Promise<TunnelCertificateRecord> {
    const now = this.clock.now();
    const parsed = parseCaCertificate(pemText, now);
    const record: TunnelCertificateRecord = {
      id: newId("tcrt", now),
      workspaceId: by.workspaceId,
      tunnelId,
      pem: parsed.pem,
      fingerprint: parsed.fingerprint,
      expiresAt: parsed.expiresAt,
      createdAt: now,
      archivedAt: null,
    };
    const view = { id: record.id, tunnel_id: tunnelId, fingerprint: record.fingerprint, archived_at: null };
    const outcome = await this.store.addCertificate(
      record,
      MAX_LIVE_CERTIFICATES,
      this.audit(by, "create", "tunnel_certificate", record.id, null, view, now),
    );
    if (outcome === "tunnel_missing") throw notFound("tunnel", tunnelId);
    if (outcome === "tunnel_archived") throw archivedTunnel(tunnelId);
    if (outcome === "full") {
      throw invalid(
        `tunnel ${tunnelId} already holds ${MAX_LIVE_CERTIFICATES} certificates that are not archived; archive one first`,
      );
    }
    return record;
  }

  async getCertificate(workspaceId: string, tunnelId: string, id: string): Promise<TunnelCertificateRecord> {
    const certificate = await this.store.getCertificate(workspaceId, tunnelId, id);
    if (!certificate) throw notFound("tunnel certificate", id);
    return certificate;
  }

  async listCertificates(
    workspaceId: string,
    tunnelId: string,
    query: TunnelListQuery,
  ): Promise<Page<TunnelCertificateRecord>> {
    await this.get(workspaceId, tunnelId);
    return this.store.listCertificates(workspaceId, tunnelId, query);
  }

  /** Removes it from the trusted set; the record stays. Archiving an archived one answers it. */
  async archiveCertificate(by: Actor, tunnelId: string, id: string): Promise<TunnelCertificateRecord> {
    const current = await this.getCertificate(by.workspaceId, tunnelId, id);
    if (current.archivedAt !== null) return current;
    const now = this.clock.now();
    const before = { id, tunnel_id: tunnelId, fingerprint: current.fingerprint, archived_at: null };
    await this.store.archiveCertificate(
      by.workspaceId,
      tunnelId,
      id,
      now,
      this.audit(by, "archive", "tunnel_certificate", id, before, { ...before, archived_at: now }, now),
    );
    return this.getCertificate(by.workspaceId, tunnelId, id);
  }

  private async liveTunnel(workspaceId: string, id: string): Promise<TunnelRecord> {
    const tunnel = await this.get(workspaceId, id);
    if (tunnel.archivedAt !== null) throw archivedTunnel(id);
    return tunnel;
  }

  private audit(
    by: Actor,
    action: AuditAction,
    resourceType: AuditResourceType,
    resourceId: string,
    before: unknown,
    after: unknown,
    at: number,
  ) {
    return auditEntry(by, { action, resourceType, resourceId, before, after, at });
  }
}

function archivedTunnel(id: string): AwakenError {
  return new AwakenError("tunnel_archived", `tunnel ${id} is archived`);
}
