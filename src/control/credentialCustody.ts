import type {
  CredentialOpening,
  CredentialOpenRequest,
  CredentialPin,
  CredentialPinner,
  PinHolderKind,
  PinnedSecretVariable,
  SecretOpening,
  SecretOpenRequest,
} from "../coordinator/ports.js";
import { a2aCardUrl } from "../kernel/a2aModel.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError, invalid, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { Outbound } from "../kernel/outboundConnector.js";
import { SecretOpenError } from "../secrets/errors.js";
import type { CredentialOpener } from "../secrets/ports.js";
import { harnessSecretNames, type KnownAcpRuntimes, NO_ACP_RUNTIMES } from "./acpRuntimes.js";
import { type AgentDefinition, referencedSecretNames } from "./agentDefinition.js";
import { SECRET_FIELDS } from "./credentialAuth.js";
import { mcpUsageKey } from "./credentialResolution.js";
import { refreshTokenGrant } from "./oauthRefresh.js";
import type {
  CredentialOpenAudit,
  CredentialRevision,
  CredentialStore,
  CredentialView,
  VaultStore,
} from "./vaultPorts.js";

/** What a holder's `mcp_oauth` refresh needs beyond the stores (wired by the composition). */
export interface RefreshDeps {
  /**
   * Commits the refreshed token as the credential's next revision through vault ingress, only if
   * the credential is still at `fromRevision`; returns the new revision (throws version_mismatch).
   */
  rotate(
    pin: CredentialPin,
    fromRevision: number,
    fields: { accessToken: string; expiresAt: string | null; refreshToken: string | null },
  ): Promise<number>;
  /** Moves the session's pins (the refreshed pin replaces the expired one). */
  advancePins(workspaceId: string, sessionId: string, pins: CredentialPin[]): Promise<void>;
  /** How token endpoints are reached (default: the public-only connector). */
  outbound?: Outbound;
}

/** An access token this close to its expiry is refreshed before use. */
const EXPIRY_MARGIN_MS = 30_000;
const TOKEN_ENDPOINT_TIMEOUT_MS = 15_000;

/** The one holder an MCP credential may be opened for: the connection to its own server. */
const MCP_HOLDERS: PinHolderKind[] = ["mcp_connection"];
/** The one holder an A2A agent's credential may be opened for: the delegate's connection to it. */
const A2A_HOLDERS: PinHolderKind[] = ["a2a_delegate"];
/**
 * The one holder an `environment_variable` secret may be opened for: the sandbox's egress proxy,
 * which substitutes it into requests. Never the sandbox itself (its processes see a placeholder).
 */
const SECRET_HOLDERS: PinHolderKind[] = ["egress_proxy"];
/**
 * A variable a stdio MCP server's `env` names from a vault: also opened for that server's process,
 * which the sandbox starts with the value in its environment (the process is its last-mile holder).
 */
const PROCESS_HOLDERS: PinHolderKind[] = ["mcp_process"];
/**
 * A variable an `acp:` agent's runtime names from a vault: also opened for that harness's process,
 * started in the sandbox with the value in its environment (its last-mile holder, like an MCP one).
 */
const HARNESS_HOLDERS: PinHolderKind[] = ["acp_harness"];

/** Who asks (the run's claim) and as which holder: what admission checks and the audit records. */
type Claim = Pick<CredentialOpenRequest, "workspaceId" | "sessionId" | "runId" | "owner" | "epoch"> & {
  holder: PinHolderKind;
};

/** The ingress usage key of an `environment_variable` credential (credentialResolution.ts). */
function secretUsageKey(secretName: string): string {
  return `env:${secretName}`;
}
const PAGE = 100;

/**
 * Custody after ingress (the credential is pinned before the Run starts):
 *
 * - `pin` freezes, at session creation, which exact revision of which credential serves each of the
 *   agent's MCP servers, from the session's `vault_ids` (in the order given: the first vault with a
 *   live credential for a server URL wins). Only ids, revisions, usage and holder policy are kept.
 * - `open` is admission plus the last mile: a run asks for its session's pin for one use and one
 *   holder; the pin (never a search for a replacement) is checked against the store (workspace,
 *   vault and credential not archived or deleted, holder allowed, the credential still serves that
 *   use), then exactly that revision is opened and only the one field the holder needs is returned.
 *   Every open and every refusal is audited, without material.
 */
export class CredentialCustody implements CredentialPinner {
  constructor(
    private readonly vaults: VaultStore,
    private readonly credentials: CredentialStore,
    private readonly opener: CredentialOpener,
    private readonly audit: CredentialOpenAudit,
    /** The session's frozen pins (null: no such session in that workspace). */
    private readonly sessionPins: (workspaceId: string, sessionId: string) => Promise<CredentialPin[] | null>,
    private readonly clock: Clock,
    /** Without it an expired `mcp_oauth` pin is refused instead of refreshed. */
    private readonly refresh?: RefreshDeps,
    /** Which variables an `acp:` agent's harness names (none composed: no `acp_harness` holder). */
    private readonly acpRuntimes: KnownAcpRuntimes = NO_ACP_RUNTIMES,
  ) {}

  async pin(
    workspaceId: string,
    vaultIds: readonly string[],
    agent: AgentDefinition,
  ): Promise<CredentialPin[]> {
    if (new Set(vaultIds).size !== vaultIds.length) throw invalid("vault_ids: a vault is listed twice");
    const live = new Map<string, CredentialView>();
    for (const vaultId of vaultIds) {
      const vault = await this.vaults.get(workspaceId, vaultId);
      if (!vault) throw notFound("vault", vaultId);
      if (vault.archivedAt !== null) {
        throw new AwakenError(
          "vault_archived",
          `vault_ids: vault ${vaultId} is archived; archived vaults cannot be attached to new sessions`,
        );
      }
      for (const view of await this.liveCredentials(workspaceId, vaultId)) {
        if (!live.has(view.head.usageKey)) live.set(view.head.usageKey, view);
      }
    }
    const pins: CredentialPin[] = [];
    // A bearer credential (static or OAuth) for one URL: an MCP server's, or an `a2a:` model's agent
    // card (its remote agent is reached like an MCP server, by the delegate's connection only).
    const bearerPin = (url: string, usage: CredentialPin["usage"], holders: PinHolderKind[]) => {
      const head = live.get(mcpUsageKey(url))?.head;
      if (!head || (head.authType !== "static_bearer" && head.authType !== "mcp_oauth")) return;
      pins.push({
        credentialId: head.id,
        vaultId: head.vaultId,
        revision: head.latestRevision,
        workspaceId,
        authType: head.authType,
        usage,
        holders: [...holders],
      });
    };
    for (const server of agent.mcp_servers) {
      // A stdio server's secrets come from `environment_variable` credentials (below), not a bearer.
      if (server.type !== "url") continue;
      bearerPin(server.url, { kind: "mcp_server", url: server.url, mcpServerName: server.name }, MCP_HOLDERS);
    }
    const cardUrl = a2aCardUrl(agent.model.id);
    if (cardUrl !== null) bearerPin(cardUrl, { kind: "a2a_agent", url: cardUrl }, A2A_HOLDERS);
    // Every live `environment_variable` credential of the listed vaults (the first vault wins per
    // variable name, as for MCP servers): the sandbox sets the variable to a placeholder and its
    // egress proxy substitutes this exact revision's secret into requests to the allowed hosts.
    // One a stdio MCP server's environment names may also be opened for that server's process,
    // and one an `acp:` agent's runtime names, for its harness.
    const forProcesses = new Set(agent.mcp_servers.flatMap(referencedSecretNames));
    const forHarness = new Set(harnessSecretNames(agent, this.acpRuntimes));
    for (const view of live.values()) {
      const auth = view.revision.auth;
      if (view.head.authType !== "environment_variable" || auth.type !== "environment_variable") continue;
      pins.push({
        credentialId: view.head.id,
        vaultId: view.head.vaultId,
        revision: view.head.latestRevision,
        workspaceId,
        authType: "environment_variable",
        usage: {
          kind: "environment_variable",
          secretName: auth.secret_name,
          networking:
            auth.networking.type === "limited"
              ? { type: "limited", allowed_hosts: [...auth.networking.allowed_hosts] }
              : { type: "unrestricted" },
          injection: { header: auth.injection_location.header, body: auth.injection_location.body },
        },
        holders: [
          ...SECRET_HOLDERS,
          ...(forProcesses.has(auth.secret_name) ? PROCESS_HOLDERS : []),
          ...(forHarness.has(auth.secret_name) ? HARNESS_HOLDERS : []),
        ],
      });
    }
    return pins;
  }

  /** The session's pinned `environment_variable` credentials, secret-free, in pin order. */
  async secretVariables(scope: { workspaceId: string; sessionId: string }): Promise<PinnedSecretVariable[]> {
    const pins = (await this.sessionPins(scope.workspaceId, scope.sessionId)) ?? [];
    const out: PinnedSecretVariable[] = [];
    for (const pin of pins) {
      if (pin.workspaceId !== scope.workspaceId || pin.usage.kind !== "environment_variable") continue;
      const { secretName, networking, injection } = pin.usage;
      out.push({
        credentialId: pin.credentialId,
        vaultId: pin.vaultId,
        revision: pin.revision,
        secretName,
        networking,
        injection,
      });
    }
    return out;
  }

  /**
   * Admission plus the last mile for the egress proxy: the session's pin for that variable (never a
   * search for another credential), the same checks as for MCP, then exactly the pinned revision's
   * `secret_value`. Audited like every open.
   */
  async openSecret(request: SecretOpenRequest): Promise<SecretOpening> {
    const pins = await this.sessionPins(request.workspaceId, request.sessionId);
    const pin = pins?.find(
      (p) => p.usage.kind === "environment_variable" && p.usage.secretName === request.secretName,
    );
    if (!pin) return { kind: "none" };
    const usageKey = secretUsageKey(request.secretName);
    const admitted = await this.admit(pin, request, usageKey);
    const refuse = async (reason: string): Promise<SecretOpening> => {
      await this.record(pin, request, usageKey, "refused", reason);
      return { kind: "refused", credentialId: pin.credentialId, revision: pin.revision, reason };
    };
    if (typeof admitted === "string") return refuse(admitted);
    let value: Buffer | null;
    try {
      value = await this.opener.openField(
        { credentialId: pin.credentialId, revision: pin.revision, workspaceId: pin.workspaceId },
        admitted.revision.sealed,
        SECRET_FIELDS.secretValue,
      );
    } catch (error) {
      if (!(error instanceof SecretOpenError)) throw error;
      return refuse(`the sealed revision did not open (${error.reason})`);
    }
    if (!value) return refuse(`the pinned revision holds no ${SECRET_FIELDS.secretValue}`);
    try {
      await this.record(pin, request, usageKey, "opened", null);
    } catch (error) {
      // No audit, no material.
      value.fill(0);
      throw error;
    }
    return { kind: "secret", value, credentialId: pin.credentialId, revision: pin.revision };
  }

  async open(request: CredentialOpenRequest): Promise<CredentialOpening> {
    const pins = await this.sessionPins(request.workspaceId, request.sessionId);
    const usageKey = mcpUsageKey(
      request.holder === "a2a_delegate" ? request.agentCardUrl : request.mcpServerUrl,
    );
    const kind = request.holder === "a2a_delegate" ? "a2a_agent" : "mcp_server";
    const pin = pins?.find(
      (p) =>
        (p.usage.kind === "mcp_server" || p.usage.kind === "a2a_agent") &&
        p.usage.kind === kind &&
        mcpUsageKey(p.usage.url) === usageKey,
    );
    if (!pin) return { kind: "none" };
    let admitted = await this.admit(pin, request, usageKey);
    if (typeof admitted !== "string" && admitted.expired) {
      admitted = await this.refreshed(pin, pins ?? [], request, usageKey);
    }
    if (typeof admitted === "string") {
      await this.record(pin, request, usageKey, "refused", admitted);
      return { kind: "refused", credentialId: pin.credentialId, revision: pin.revision, reason: admitted };
    }
    // After a refresh, the admitted pin is the session's moved pin (same credential, next revision).
    return this.openAdmitted(admitted.pin, admitted.revision, request, usageKey);
  }

  /** Opens exactly the admitted revision's one field the holder needs; audits the open. */
  private async openAdmitted(
    pin: CredentialPin,
    row: CredentialRevision,
    request: CredentialOpenRequest,
    usageKey: string,
  ): Promise<CredentialOpening> {
    const field = pin.authType === "static_bearer" ? SECRET_FIELDS.token : SECRET_FIELDS.accessToken;
    let token: Buffer | null;
    try {
      token = await this.opener.openField(
        { credentialId: pin.credentialId, revision: pin.revision, workspaceId: pin.workspaceId },
        row.sealed,
        field,
      );
    } catch (error) {
      if (!(error instanceof SecretOpenError)) throw error;
      const reason = `the sealed revision did not open (${error.reason})`;
      await this.record(pin, request, usageKey, "refused", reason);
      return { kind: "refused", credentialId: pin.credentialId, revision: pin.revision, reason };
    }
    if (!token) {
      const reason = `the pinned revision holds no ${field}`;
      await this.record(pin, request, usageKey, "refused", reason);
      return { kind: "refused", credentialId: pin.credentialId, revision: pin.revision, reason };
    }
    try {
      await this.record(pin, request, usageKey, "opened", null);
    } catch (error) {
      // No audit, no material.
      token.fill(0);
      throw error;
    }
    return { kind: "bearer", token, credentialId: pin.credentialId, revision: pin.revision };
  }

  listOpens(workspaceId: string, sessionId: string) {
    return this.audit.listForSession(workspaceId, sessionId);
  }

  /**
   * The checks before anything opens: a refusal reason, or the pinned revision's row (with whether
   * its `mcp_oauth` access token has expired, which the caller may refresh).
   */
  private async admit(
    pin: CredentialPin,
    request: Claim,
    usageKey: string,
  ): Promise<string | { pin: CredentialPin; revision: CredentialRevision; expired: boolean }> {
    if (pin.workspaceId !== request.workspaceId) return "the pin belongs to another workspace";
    if (!pin.holders.includes(request.holder))
      return `the pin's holder policy does not allow the ${request.holder} holder`;
    const vault = await this.vaults.get(pin.workspaceId, pin.vaultId);
    if (!vault) return `vault ${pin.vaultId} was deleted`;
    if (vault.archivedAt !== null) return `vault ${pin.vaultId} is archived`;
    const view = await this.credentials.get(pin.workspaceId, pin.vaultId, pin.credentialId);
    if (!view) return `credential ${pin.credentialId} was deleted`;
    if (view.head.archivedAt !== null) return `credential ${pin.credentialId} is archived`;
    if (view.head.usageKey !== usageKey || view.head.authType !== pin.authType)
      return pin.usage.kind === "mcp_server"
        ? `credential ${pin.credentialId} does not serve this MCP server`
        : pin.usage.kind === "a2a_agent"
          ? `credential ${pin.credentialId} does not serve this A2A agent`
          : `credential ${pin.credentialId} does not serve this variable`;
    const revision = await this.credentials.getRevision(pin.workspaceId, pin.credentialId, pin.revision);
    if (!revision) return `revision ${pin.revision} of credential ${pin.credentialId} is gone`;
    const expired =
      revision.auth.type === "mcp_oauth" &&
      revision.auth.expires_at !== null &&
      Date.parse(revision.auth.expires_at) <= this.clock.now() + EXPIRY_MARGIN_MS;
    return { pin, revision, expired };
  }

  /**
   * The pinned `mcp_oauth` revision expired: its successor by refresh, never another credential.
   * If a holder already refreshed exactly this revision, that revision is adopted (the grant's
   * refresh token may have been rotated by it). Otherwise, and only while the credential is still at
   * the pinned revision (an operator rotation since is not ours to follow), the pinned refresh token
   * is exchanged at the token endpoint and the result committed through vault ingress as the next
   * revision. The session's pin then moves to that revision; the refresh is audited.
   */
  private async refreshed(
    pin: CredentialPin,
    pins: CredentialPin[],
    request: CredentialOpenRequest,
    usageKey: string,
  ): Promise<string | { pin: CredentialPin; revision: CredentialRevision; expired: boolean }> {
    const expiredReason = `the pinned access token of credential ${pin.credentialId} (revision ${pin.revision}) expired`;
    if (!this.refresh) return `${expiredReason} and this server cannot refresh it`;
    const row = await this.credentials.getRevision(pin.workspaceId, pin.credentialId, pin.revision);
    if (row?.auth.type !== "mcp_oauth" || !row.auth.refresh)
      return `${expiredReason} and it has no refresh configuration`;
    let to = await this.audit.refreshedFrom(pin.workspaceId, pin.credentialId, pin.revision);
    if (to === null) {
      const exchanged = await this.exchange(pin, row);
      if (typeof exchanged === "string") return `${expiredReason}; refreshing it failed: ${exchanged}`;
      try {
        to = await this.refresh.rotate(pin, pin.revision, exchanged);
      } catch (error) {
        if (!(error instanceof AwakenError && error.code === "version_mismatch")) throw error;
        // Another holder refreshed it first (adopt that), or an operator rotated it (not ours).
        to = await this.audit.refreshedFrom(pin.workspaceId, pin.credentialId, pin.revision);
        if (to === null)
          return `${expiredReason} and the credential was rotated since this session pinned it`;
      }
      await this.record(pin, request, usageKey, "refreshed", null, to);
    }
    const next: CredentialPin = { ...pin, revision: to };
    await this.refresh.advancePins(
      request.workspaceId,
      request.sessionId,
      pins.map((p) => (p === pin ? next : p)),
    );
    const admitted = await this.admit(next, request, usageKey);
    if (typeof admitted === "string") return admitted;
    if (admitted.expired) return `${expiredReason} and its refreshed revision ${to} expired too`;
    return admitted;
  }

  /** One refresh_token grant (RFC 6749 §6, `oauthRefresh.ts`). Returns the new token fields, or why it failed. */
  private async exchange(
    pin: CredentialPin,
    row: CredentialRevision,
  ): Promise<string | { accessToken: string; expiresAt: string | null; refreshToken: string | null }> {
    const identity = { credentialId: pin.credentialId, revision: pin.revision, workspaceId: pin.workspaceId };
    const outcome = await refreshTokenGrant(this.opener, identity, row, {
      outbound: this.refresh?.outbound,
      now: this.clock.now(),
      timeoutMs: TOKEN_ENDPOINT_TIMEOUT_MS,
    });
    return outcome.status === "succeeded" ? outcome.fields : outcome.reason;
  }

  private async record(
    pin: CredentialPin,
    request: Claim,
    usageKey: string,
    outcome: "opened" | "refreshed" | "refused",
    reason: string | null,
    refreshedTo: number | null = null,
  ): Promise<void> {
    const now = this.clock.now();
    await this.audit.record({
      id: newId("copn", now),
      workspaceId: request.workspaceId,
      sessionId: request.sessionId,
      runId: request.runId,
      owner: request.owner,
      epoch: request.epoch,
      vaultId: pin.vaultId,
      credentialId: pin.credentialId,
      revision: pin.revision,
      usageKey,
      holder: request.holder,
      outcome,
      reason,
      refreshedTo,
      createdAt: now,
    });
  }

  private async liveCredentials(workspaceId: string, vaultId: string): Promise<CredentialView[]> {
    const out: CredentialView[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.credentials.list(workspaceId, vaultId, {
        limit: PAGE,
        cursor,
        includeArchived: false,
      });
      out.push(...page.data.filter((v) => v.head.archivedAt === null));
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }
}
