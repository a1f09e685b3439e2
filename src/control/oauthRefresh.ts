import { defaultOutbound, type Outbound, outboundRefusalOf } from "../kernel/outboundConnector.js";
import type { CredentialOpener, RevisionIdentity } from "../secrets/ports.js";
import { SECRET_FIELDS } from "./credentialAuth.js";
import { type CapturedHttpResponse, capture, readCapped } from "./httpCapture.js";
import type { CredentialRevision } from "./vaultPorts.js";

/** What a successful `refresh_token` grant gives: the fields of the credential's next revision. */
export interface RefreshedTokenFields {
  accessToken: string;
  expiresAt: string | null;
  /** A rotated refresh token, when the endpoint sent one. */
  refreshToken: string | null;
}

/**
 * The outcome of one grant, in the wire's terms (`refresh.status` of a validation):
 * `no_refresh_token` (nothing was sent), `connect_error` (the endpoint was not reached or did not
 * answer in time; `notAllowed`, the policy's message, when the outbound policy refused its
 * address, and then nothing was sent), `failed` (it answered, but not with an access token), `succeeded`.
 * `reason` is for logs and refusals: ids, statuses and the OAuth `error` code only.
 */
export type RefreshGrantOutcome =
  | { status: "succeeded"; fields: RefreshedTokenFields }
  | { status: "no_refresh_token"; reason: string }
  | { status: "connect_error"; reason: string; notAllowed?: string }
  | { status: "failed"; reason: string; response: CapturedHttpResponse };

export interface RefreshGrantOptions {
  /** How the token endpoint is reached (default: the public-only connector). */
  outbound?: Outbound | undefined;
  /** For `expires_in` → `expires_at`. */
  now: number;
  timeoutMs: number;
  /** Other secrets to scrub from a captured answer (the refresh token and client secret always are). */
  alsoScrub?: readonly string[] | undefined;
}

/**
 * One `refresh_token` grant (RFC 6749 §6) for exactly this revision (identity from its row): opens
 * its `refresh_token` (and `client_secret`), posts them to the revision's token endpoint
 * (`client_secret_basic`/`_post`/`none`, `scope`, `resource`), and returns the new token fields or
 * why not. Redirects are not followed (a redirected POST would carry the refresh token elsewhere);
 * the endpoint is reached through the outbound connector (no private address unless allow-listed).
 * A captured error answer is scrubbed of the refresh token and client secret it was sent.
 * Throws `SecretOpenError` when the revision does not open.
 */
export async function refreshTokenGrant(
  opener: CredentialOpener,
  identity: RevisionIdentity,
  row: CredentialRevision,
  options: RefreshGrantOptions,
): Promise<RefreshGrantOutcome> {
  if (row.auth.type !== "mcp_oauth" || !row.auth.refresh) {
    return { status: "no_refresh_token", reason: "no refresh configuration" };
  }
  const refresh = row.auth.refresh;
  const outbound = options.outbound ?? defaultOutbound();
  // Refused before anything is opened; the connection is checked again when it is made.
  const early = await outbound.admit(refresh.token_endpoint);
  if (early) return notAllowed(early.message);
  const refreshToken = await opener.openField(identity, row.sealed, SECRET_FIELDS.refreshToken);
  const clientSecret =
    refresh.token_endpoint_auth.type === "none"
      ? null
      : await opener.openField(identity, row.sealed, SECRET_FIELDS.clientSecret);
  if (!refreshToken) {
    clientSecret?.fill(0);
    return { status: "no_refresh_token", reason: "the pinned revision holds no refresh_token" };
  }
  // The token endpoint takes form fields: these strings cannot be zeroed (as request bodies at
  // ingress); the Buffers they came from are.
  const sent: string[] = [refreshToken.toString("utf8"), ...(options.alsoScrub ?? [])];
  const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: sent[0] ?? "" });
  refreshToken.fill(0);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (refresh.token_endpoint_auth.type === "client_secret_basic" && clientSecret) {
    const secret = clientSecret.toString("utf8");
    sent.push(secret);
    const basic = `${encodeURIComponent(refresh.client_id)}:${encodeURIComponent(secret)}`;
    headers.authorization = `Basic ${Buffer.from(basic, "utf8").toString("base64")}`;
    sent.push(basic);
  } else {
    form.set("client_id", refresh.client_id);
    if (clientSecret) {
      const secret = clientSecret.toString("utf8");
      sent.push(secret);
      form.set("client_secret", secret);
    }
  }
  clientSecret?.fill(0);
  if (refresh.scope) form.set("scope", refresh.scope);
  if (refresh.resource) form.set("resource", refresh.resource);
  let response: Response;
  let raw: { bytes: Buffer; complete: boolean };
  try {
    response = await outbound.fetch(refresh.token_endpoint, {
      method: "POST",
      headers,
      body: form.toString(),
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    raw = await readCapped(response);
  } catch (error) {
    const refusal = outboundRefusalOf(error);
    if (refusal) return notAllowed(refusal.message);
    return {
      status: "connect_error",
      reason: `the token endpoint could not be reached (${error instanceof Error ? error.name : "error"})`,
    };
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = raw.complete ? JSON.parse(raw.bytes.toString("utf8")) : null;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    // Reported by status below.
  }
  if (!response.ok || typeof body.access_token !== "string" || body.access_token === "") {
    // Only the OAuth error code: an endpoint's description could echo what it was sent.
    const code = typeof body.error === "string" ? ` (${body.error.slice(0, 64)})` : "";
    return {
      status: "failed",
      reason: `the token endpoint answered HTTP ${response.status}${code}`,
      response: capture(response, raw.bytes, raw.complete, sent),
    };
  }
  const expiresIn = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : null;
  return {
    status: "succeeded",
    fields: {
      accessToken: body.access_token,
      expiresAt: expiresIn === null ? null : new Date(options.now + expiresIn * 1000).toISOString(),
      refreshToken:
        typeof body.refresh_token === "string" && body.refresh_token !== "" ? body.refresh_token : null,
    },
  };
}

function notAllowed(message: string): RefreshGrantOutcome {
  return {
    status: "connect_error",
    reason: `the token endpoint is not allowed: ${message}`,
    notAllowed: message,
  };
}
