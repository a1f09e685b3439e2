import type { FastifyRequest } from "fastify";
import { type Clock, clearTimer, setTimer } from "../../kernel/clock.js";
import { AwakenError } from "../../kernel/errors.js";
import { type AuthDeps, authenticate, authorize, principalKey, principalOf } from "./auth.js";

/**
 * How often a long-lived response re-authenticates the credential it was opened with. A revocation
 * ends the streams of this process, and of replicas on the same PostgreSQL database (told at once),
 * within this; behind Control's link, within this plus the link's authentication cache.
 */
export const CREDENTIAL_RECHECK_MS = 5_000;

/** What a long-lived response re-authenticates with: the same services the request used. */
export interface CredentialDeps extends AuthDeps {
  clock: Clock;
}

/** The reason a credential's signal aborts with: one shared value (no stack trace per stream). */
export const CREDENTIAL_ENDED = new AwakenError(
  "unauthenticated",
  "The credential this stream was opened with expired or was revoked; open it again with a valid one.",
);

/**
 * A signal that aborts when the request's credential ends: at an access token's expiry, or when
 * re-authenticating it (the request's own `authenticate` and `authorize`, so a replica and a split
 * Coordinator answer as they answered the request) is refused. Checking stops when `open` aborts
 * (the response ended): one unref'd timer per response, never more.
 */
export function credentialLifetime(
  deps: CredentialDeps,
  request: FastifyRequest,
  open: AbortSignal,
  recheckMs = CREDENTIAL_RECHECK_MS,
): AbortSignal {
  const ended = new AbortController();
  const principal = principalOf(request);
  const owner = principalKey(principal);
  const expiresAt = principal.kind === "api_key" ? principal.expiresAt : undefined;
  let timer: unknown;
  const end = () => {
    clearTimer(deps.clock, timer);
    if (!ended.signal.aborted) ended.abort(CREDENTIAL_ENDED);
  };
  const expired = () => expiresAt !== undefined && expiresAt <= deps.clock.now();
  const schedule = () => {
    if (open.aborted || ended.signal.aborted) return;
    // Never aborts synchronously: the caller adds its listener after this returns.
    const untilExpiry = expiresAt === undefined ? recheckMs : expiresAt - deps.clock.now();
    // On the request's clock: a test that advances it past an expiry ends the stream at once.
    timer = setTimer(deps.clock, check, Math.max(0, Math.min(recheckMs, untilExpiry)), { unref: true });
  };
  const check = async () => {
    if (open.aborted) return;
    if (expired() || !(await stillValid(deps, request, owner))) end();
    else schedule();
  };
  open.addEventListener("abort", () => clearTimer(deps.clock, timer), { once: true });
  schedule();
  return ended.signal;
}

/** Categories that refuse the credential itself; anything else (a database away) is retried. */
const REFUSALS = new Set(["unauthenticated", "forbidden", "precondition_failed"]);

async function stillValid(deps: AuthDeps, request: FastifyRequest, owner: string): Promise<boolean> {
  try {
    const principal = await authenticate(deps, request);
    // The role was checked when the response opened and a key's role never changes: only its kind,
    // bindings and (for a sessions token) live lease are checked again.
    authorize(principal, request, principal.kind === "api_key" ? principal.role : "runtime");
    return principalKey(principal) === owner;
  } catch (error) {
    return !(error instanceof AwakenError && REFUSALS.has(error.category));
  }
}
