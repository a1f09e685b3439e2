/**
 * The signal that ends a long-lived response with its credential: at an access token's expiry, at
 * the first re-check the credential is refused, never because the store was briefly away, and no
 * re-check once the response is over.
 */
import type { FastifyRequest } from "fastify";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Principal } from "../../src/control/iamService.js";
import type { AuthPrincipal } from "../../src/edge/http/auth.js";
import {
  CREDENTIAL_ENDED,
  CREDENTIAL_RECHECK_MS,
  type CredentialDeps,
  credentialLifetime,
} from "../../src/edge/http/credentialLifetime.js";
import { AwakenError } from "../../src/kernel/errors.js";

const KEY: Principal = {
  workspaceId: "wrkspc_default",
  apiKeyId: "key_1",
  role: "runtime",
  scope: { agentIds: null, sessionId: null, sessionNamespace: null, operations: null },
};

function requestAs(principal: AuthPrincipal): FastifyRequest {
  return {
    principal,
    headers: { authorization: "Bearer sk-some-key" },
    routeOptions: { config: {}, url: "/v1/awaken/sessions/stream" },
    params: {},
    method: "GET",
  } as unknown as FastifyRequest;
}

function depsAnswering(answer: () => Promise<Principal | null>): CredentialDeps & { calls: () => number } {
  let calls = 0;
  return {
    iam: {
      authenticate: async () => {
        calls++;
        return answer();
      },
    },
    environmentKeys: {} as CredentialDeps["environmentKeys"],
    workQueue: {} as CredentialDeps["workQueue"],
    clock: { now: () => Date.now() },
    calls: () => calls,
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("credentialLifetime", () => {
  it("an access token's signal aborts at its expiry, not before", async () => {
    const expiresAt = Date.now() + 2 * CREDENTIAL_RECHECK_MS + 1_000;
    const token: Principal = { ...KEY, accessTokenId: "atok_1", expiresAt };
    const deps = depsAnswering(async () => token);
    const signal = credentialLifetime(
      deps,
      requestAs({ kind: "api_key", ...token }),
      new AbortController().signal,
    );
    await vi.advanceTimersByTimeAsync(expiresAt - Date.now() - 1);
    expect(signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(CREDENTIAL_ENDED);
  });

  it("aborts at the first re-check that refuses the credential", async () => {
    let valid = true;
    const deps = depsAnswering(async () => (valid ? KEY : null));
    const signal = credentialLifetime(
      deps,
      requestAs({ kind: "api_key", ...KEY }),
      new AbortController().signal,
    );
    await vi.advanceTimersByTimeAsync(CREDENTIAL_RECHECK_MS * 3);
    expect(signal.aborted).toBe(false);
    expect(deps.calls()).toBe(3);
    valid = false;
    await vi.advanceTimersByTimeAsync(CREDENTIAL_RECHECK_MS);
    expect(signal.aborted).toBe(true);
  });

  it("a store or link that is away does not end the response; the next answer decides", async () => {
    let answer: () => Promise<Principal | null> = async () => {
      throw new Error("connection refused");
    };
    const deps = depsAnswering(() => answer());
    const signal = credentialLifetime(
      deps,
      requestAs({ kind: "api_key", ...KEY }),
      new AbortController().signal,
    );
    await vi.advanceTimersByTimeAsync(CREDENTIAL_RECHECK_MS);
    answer = async () => {
      throw new AwakenError("unavailable", "Control is not answering");
    };
    await vi.advanceTimersByTimeAsync(CREDENTIAL_RECHECK_MS);
    expect(signal.aborted).toBe(false);
    answer = async () => null;
    await vi.advanceTimersByTimeAsync(CREDENTIAL_RECHECK_MS);
    expect(signal.aborted).toBe(true);
  });

  it("checks nothing once the response has ended", async () => {
    const deps = depsAnswering(async () => KEY);
    const open = new AbortController();
    credentialLifetime(deps, requestAs({ kind: "api_key", ...KEY }), open.signal);
    await vi.advanceTimersByTimeAsync(CREDENTIAL_RECHECK_MS);
    open.abort();
    await vi.advanceTimersByTimeAsync(CREDENTIAL_RECHECK_MS * 10);
    expect(deps.calls()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
