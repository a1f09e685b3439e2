import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { defaultOutbound, type Outbound, outboundRefusalOf } from "../kernel/outboundConnector.js";
import { SecretOpenError } from "../secrets/errors.js";
import type { CredentialOpener, RevisionIdentity } from "../secrets/ports.js";
import { SECRET_FIELDS } from "./credentialAuth.js";
import { type CapturedHttpResponse, capture, READ_LIMIT_BYTES } from "./httpCapture.js";
import { type RefreshedTokenFields, refreshTokenGrant } from "./oauthRefresh.js";
import type {
  CredentialOpenAudit,
  CredentialRevision,
  CredentialStore,
  CredentialView,
} from "./vaultPorts.js";

/** The MCP step that failed and the server's answer to it (null: no answer, e.g. connect error). */
export interface McpProbeReport {
  method: string;
  httpResponse: CapturedHttpResponse | null;
}

/** The refresh attempted after the server rejected the access token. */
export interface RefreshReport {
  status: "succeeded" | "failed" | "connect_error" | "no_refresh_token";
  /** The token endpoint's answer, only when `failed`. */
  httpResponse: CapturedHttpResponse | null;
}

/** `mcp_oauth_validate`'s answer (wire §5 CredentialValidation). */
export interface CredentialValidation {
  credentialId: string;
  vaultId: string;
  status: "valid" | "invalid" | "unknown";
  hasRefreshToken: boolean;
  /** The failing probe step; null when the probe succeeded or nothing was probed. */
  mcpProbe: McpProbeReport | null;
  /** Null when no refresh was attempted. */
  refresh: RefreshReport | null;
  validatedAt: number;
}

export interface CredentialValidatorDeps {
  opener: CredentialOpener;
  audit: CredentialOpenAudit;
  clock: Clock;
  /**
   * Commits a refreshed token as the credential's next revision through vault ingress, only while
   * the credential is still at `fromRevision` (throws `version_mismatch` otherwise); the same path a
   * holder's refresh takes.
   */
  rotate(view: CredentialView, fromRevision: number, fields: RefreshedTokenFields): Promise<CredentialView>;
  /**
   * How the MCP server and the token endpoint are reached (default: the public-only connector);
   * the composition passes its own, with the operator's allow-list of private hosts.
   */
  outbound?: Outbound;
  /** Per HTTP exchange (probe, token endpoint); default 10 s. */
  timeoutMs?: number;
}

/** The audit's name for this holder (`credential_opens.holder`). */
export const VALIDATION_HOLDER = "validation_probe";
/** The MCP method the probe calls: the first one any client sends, and the one that checks auth. */
export const PROBE_METHOD = "initialize";
const DEFAULT_TIMEOUT_MS = 10_000;
const SESSION_CLOSE_TIMEOUT_MS = 2_000;
const PROBE_REQUEST_ID = 1;

type ProbeResult =
  | { kind: "ok" }
  /** 401/403: the server refused the credential. */
  | { kind: "rejected"; response: CapturedHttpResponse }
  /** Anything else: not reached, timed out, redirected, another status, or not an MCP answer. */
  | { kind: "error"; response: CapturedHttpResponse | null };

/**
 * The live probe behind `mcp_oauth_validate` for `static_bearer` and `mcp_oauth` credentials.
 *
 * Opens the credential's current revision (identity from its row, through the same sealed opener
 * as admission; every open audited in `credential_opens` with holder `validation_probe`, no
 * material) and sends one MCP `initialize` (JSON-RPC over Streamable HTTP, `Authorization: Bearer`)
 * to the credential's `mcp_server_url`. 2xx with an initialize result → `valid`. 401/403 → for an
 * `mcp_oauth` credential with a refresh token, one `refresh_token` grant (the holder's code); a new
 * token is committed as the next revision exactly as a holder's refresh is (audited `refreshed`, so
 * sessions pinned to the old revision follow it), then probed again → `valid` / `invalid`; without a
 * refresh → `invalid`. No answer, a timeout, a redirect or any other answer → `unknown`.
 *
 * The URL is reached as MCP connections reach it, through the outbound connector: a loopback,
 * link-local, private or reserved address (after resolution) is refused unless the operator's
 * allow-list names it, and the call answers 400 saying so, with nothing from the target (the
 * probe must not be a way to read the host's own network). Redirects are not followed, so the
 * bearer never goes anywhere else. Reported bodies are scrubbed of every token involved and cut
 * at 4 KiB.
 */
export class CredentialValidator {
  private readonly timeoutMs: number;
  private readonly outbound: Outbound;

  constructor(
    private readonly credentials: CredentialStore,
    private readonly deps: CredentialValidatorDeps,
  ) {
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.outbound = deps.outbound ?? defaultOutbound();
  }

  /**
   * `refreshable: false` (an archived vault or credential, which takes no new revision): a refused
   * token is reported as it stands and the token endpoint is not called (a grant that could not be
   * committed might rotate away the stored refresh token).
   */
  async validate(
    view: CredentialView,
    options: { refreshable?: boolean } = {},
  ): Promise<CredentialValidation> {
    const { head, revision } = view;
    const auth = revision.auth;
    if (auth.type === "environment_variable") {
      throw new AwakenError("invalid_request", `credential ${head.id} is not an MCP credential`);
    }
    const result = (
      status: CredentialValidation["status"],
      mcpProbe: McpProbeReport | null,
      refresh: RefreshReport | null,
      final: CredentialRevision = revision,
    ): CredentialValidation => ({
      credentialId: head.id,
      vaultId: head.vaultId,
      status,
      hasRefreshToken: final.secretFields.includes(SECRET_FIELDS.refreshToken),
      mcpProbe,
      refresh,
      validatedAt: this.deps.clock.now(),
    });
    if (!isHttpUrl(auth.mcp_server_url)) {
      return result("unknown", { method: PROBE_METHOD, httpResponse: null }, null);
    }
    // A forbidden address is refused before the token is even opened.
    const refused = await this.outbound.admit(auth.mcp_server_url);
    if (refused) throw notAllowed("mcp_server_url", refused.message);
    const token = await this.openToken(view, revision);
    // An MCP credential always has its token; a revision without one has nothing to test.
    if (token === null) return result("invalid", null, null);
    const secrets = [token];
    const first = await this.probe(auth.mcp_server_url, token, secrets);
    if (first.kind === "ok") return result("valid", null, null);
    const failed: McpProbeReport = { method: PROBE_METHOD, httpResponse: first.response };
    if (first.kind === "error") return result("unknown", failed, null);
    // The server refused the token. Only an mcp_oauth credential can get a new one, and only where
    // a new revision may be committed.
    if (auth.type !== "mcp_oauth" || options.refreshable === false || head.archivedAt !== null) {
      return result("invalid", failed, null);
    }
    if (!auth.refresh || !revision.secretFields.includes(SECRET_FIELDS.refreshToken)) {
      return result("invalid", failed, { status: "no_refresh_token", httpResponse: null });
    }

    const identity = identityOf(revision);
    const grant = await refreshTokenGrant(this.deps.opener, identity, revision, {
      outbound: this.outbound,
      now: this.deps.clock.now(),
      timeoutMs: this.timeoutMs,
      alsoScrub: secrets,
    });
    if (grant.status !== "succeeded") {
      await this.record(
        view,
        revision.revision,
        "refused",
        `refreshing the access token failed: ${grant.reason}`,
      );
      if (grant.status === "connect_error" && grant.notAllowed) {
        throw notAllowed("refresh.token_endpoint", grant.notAllowed);
      }
      const response = grant.status === "failed" ? grant.response : null;
      const status = grant.status === "connect_error" ? "unknown" : "invalid";
      return result(status, failed, { status: grant.status, httpResponse: response });
    }
    secrets.push(grant.fields.accessToken, ...(grant.fields.refreshToken ? [grant.fields.refreshToken] : []));
    const refreshed: RefreshReport = { status: "succeeded", httpResponse: null };
    const next = await this.commit(view, revision.revision, grant.fields);
    if (!next) {
      // Rotated by someone else since this probe read it: the new token is not the credential's.
      return result("unknown", failed, refreshed);
    }
    const nextToken = await this.openToken(view, next);
    if (nextToken === null) return result("invalid", failed, refreshed, next);
    secrets.push(nextToken);
    const second = await this.probe(auth.mcp_server_url, nextToken, secrets);
    if (second.kind === "ok") return result("valid", null, refreshed, next);
    const again: McpProbeReport = { method: PROBE_METHOD, httpResponse: second.response };
    return result(second.kind === "rejected" ? "invalid" : "unknown", again, refreshed, next);
  }

  /**
   * Commits the refreshed token from exactly `fromRevision`; audited as a holder's refresh. If a
   * holder refreshed that revision first, its revision is adopted (the grant's refresh token may
   * have been rotated by it); an operator's rotation since is not ours to follow (null).
   */
  private async commit(
    view: CredentialView,
    fromRevision: number,
    fields: RefreshedTokenFields,
  ): Promise<CredentialRevision | null> {
    let to: number;
    try {
      to = (await this.deps.rotate(view, fromRevision, fields)).revision.revision;
    } catch (error) {
      if (!(error instanceof AwakenError && error.code === "version_mismatch")) throw error;
      const adopted = await this.deps.audit.refreshedFrom(view.head.workspaceId, view.head.id, fromRevision);
      if (adopted === null) return null;
      to = adopted;
    }
    await this.record(view, fromRevision, "refreshed", null, to);
    return this.credentials.getRevision(view.head.workspaceId, view.head.id, to);
  }

  /**
   * The bearer of one revision as a string (the `Authorization` header needs one; the Buffer is
   * zeroed at once). Audited before it is returned: no audit, no material.
   */
  private async openToken(view: CredentialView, row: CredentialRevision): Promise<string | null> {
    const field = row.auth.type === "static_bearer" ? SECRET_FIELDS.token : SECRET_FIELDS.accessToken;
    let opened: Buffer | null;
    try {
      opened = await this.deps.opener.openField(identityOf(row), row.sealed, field);
    } catch (error) {
      if (!(error instanceof SecretOpenError)) throw error;
      await this.record(view, row.revision, "refused", `the sealed revision did not open (${error.reason})`);
      throw new AwakenError(
        "credential_unopenable",
        `${error.message}; nothing was probed. Restore the master key that sealed it, or rotate the credential.`,
        { retryable: false, cause: error },
      );
    }
    if (!opened) return null;
    try {
      await this.record(view, row.revision, "opened", null);
      return opened.toString("utf8");
    } finally {
      opened.fill(0);
    }
  }

  private async record(
    view: CredentialView,
    revision: number,
    outcome: "opened" | "refreshed" | "refused",
    reason: string | null,
    refreshedTo: number | null = null,
  ): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.audit.record({
      id: newId("copn", now),
      workspaceId: view.head.workspaceId,
      // Not a session's open: the operator's validation call through the API.
      sessionId: "",
      runId: "",
      owner: "control",
      epoch: 0,
      vaultId: view.head.vaultId,
      credentialId: view.head.id,
      revision,
      usageKey: view.head.usageKey,
      holder: VALIDATION_HOLDER,
      outcome,
      reason,
      refreshedTo,
      createdAt: now,
    });
  }

  /** One `initialize` POST with the bearer; the answer classified and, unless `ok`, captured. */
  private async probe(url: string, token: string, secrets: readonly string[]): Promise<ProbeResult> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    try {
      response = await this.outbound.fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: PROBE_REQUEST_ID,
          method: PROBE_METHOD,
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: { name: "awaken-agents-validation", version: "0.1.0" },
          },
        }),
        redirect: "manual",
        signal,
      });
    } catch (error) {
      // Checked at connect time too (a name may resolve elsewhere now): never an answer to report.
      const refusal = outboundRefusalOf(error);
      if (refusal) throw notAllowed("mcp_server_url", refusal.message);
      return { kind: "error", response: null };
    }
    let read: { bytes: Buffer; complete: boolean; answer: "result" | "error" | null };
    try {
      read = await readInitializeAnswer(response);
    } catch {
      // Headers came, the body did not (timeout, reset): report what the status says, no body.
      read = { bytes: Buffer.alloc(0), complete: false, answer: null };
    }
    if (response.status === 401 || response.status === 403) {
      return { kind: "rejected", response: capture(response, read.bytes, read.complete, secrets) };
    }
    if (response.status >= 200 && response.status < 300 && read.answer === "result") {
      await this.closeSession(url, token, response.headers.get("mcp-session-id"));
      return { kind: "ok" };
    }
    return { kind: "error", response: capture(response, read.bytes, read.complete, secrets) };
  }

  /** Ends the MCP session the probe opened (best effort; servers expire idle sessions anyway). */
  private async closeSession(url: string, token: string, sessionId: string | null): Promise<void> {
    if (!sessionId) return;
    try {
      const response = await this.outbound.fetch(url, {
        method: "DELETE",
        headers: {
          authorization: `Bearer ${token}`,
          "mcp-session-id": sessionId,
          "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
        },
        redirect: "manual",
        signal: AbortSignal.timeout(SESSION_CLOSE_TIMEOUT_MS),
      });
      await response.body?.cancel();
    } catch {
      // Best effort.
    }
  }
}

/**
 * Reads the answer to the probe's request: a JSON body, or the first SSE `message` event carrying
 * the response (the stream is not read further). `answer` says whether it was a JSON-RPC result, an
 * error, or neither. At most `READ_LIMIT_BYTES` are read.
 */
async function readInitializeAnswer(
  response: Response,
): Promise<{ bytes: Buffer; complete: boolean; answer: "result" | "error" | null }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const isSse = (response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream");
  if (!response.body) return { bytes: Buffer.alloc(0), complete: true, answer: null };
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        const bytes = Buffer.concat(chunks);
        return { bytes, complete: true, answer: classifyAnswer(bytes.toString("utf8"), isSse) };
      }
      chunks.push(Buffer.from(value));
      size += value.byteLength;
      if (size > READ_LIMIT_BYTES) {
        const bytes = Buffer.concat(chunks).subarray(0, READ_LIMIT_BYTES);
        return { bytes, complete: false, answer: null };
      }
      if (isSse) {
        const bytes = Buffer.concat(chunks);
        const answer = classifyAnswer(bytes.toString("utf8"), true);
        if (answer !== null) return { bytes, complete: true, answer };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

function classifyAnswer(text: string, isSse: boolean): "result" | "error" | null {
  const messages = isSse ? sseData(text) : [text];
  for (const data of messages) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      continue;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      if (!message || typeof message !== "object") continue;
      const m = message as Record<string, unknown>;
      if (m.jsonrpc !== "2.0" || m.id !== PROBE_REQUEST_ID) continue;
      if (m.result && typeof m.result === "object") return "result";
      if (m.error && typeof m.error === "object") return "error";
    }
  }
  return null;
}

/** The `data` of every complete SSE event in `text` (events end with a blank line). */
function sseData(text: string): string[] {
  const events = text.replace(/\r\n?/g, "\n").split("\n\n");
  events.pop(); // the last part is incomplete (or empty)
  return events.map((event) =>
    event
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n"),
  );
}

/** The 400 for a credential URL the outbound policy refuses. */
function notAllowed(field: string, message: string): AwakenError {
  return new AwakenError("invalid_request", `the credential's ${field} cannot be reached: ${message}`, {
    retryable: false,
  });
}

function identityOf(row: CredentialRevision): RevisionIdentity {
  return { credentialId: row.credentialId, revision: row.revision, workspaceId: row.workspaceId };
}

function isHttpUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:";
  } catch {
    return false;
  }
}
