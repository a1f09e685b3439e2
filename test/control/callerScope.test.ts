import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  type AccessTokenClaims,
  decodeAccessToken,
  encodeAccessToken,
} from "../../src/control/accessTokens.js";
import {
  type CallerScope,
  isUnscoped,
  narrowScope,
  scopeMayStart,
  scopeNamesInNamespace,
  scopeReachesSession,
  sessionNamespaceProblem,
  UNSCOPED,
} from "../../src/control/callerScope.js";

// The scope rules of API keys and access tokens, namespaces included, and the claims that carry them.

const token = (over: Partial<CallerScope>): CallerScope => ({
  agentIds: null,
  sessionId: null,
  sessionNamespace: null,
  operations: ["read", "send", "create"],
  ...over,
});

describe("a scope confined to a session namespace", () => {
  const scope = token({ sessionNamespace: "user-42/" });

  it("reaches a session only through a bound client name inside the namespace", () => {
    const session = { id: "sesn_a", agentId: "agent_a" };
    expect(scopeReachesSession(scope, { ...session, names: ["user-42/chat-1"] })).toBe(true);
    expect(scopeReachesSession(scope, { ...session, names: ["user-7/chat-1"] })).toBe(false);
    expect(scopeReachesSession(scope, { ...session, names: ["user-420/chat"] })).toBe(false);
    expect(scopeReachesSession(scope, { ...session, names: [] })).toBe(false);
    // Names not looked up count as none: an unnamed session is out of reach.
    expect(scopeReachesSession(scope, session)).toBe(false);
    // The agent list still applies.
    const listed = token({ sessionNamespace: "user-42/", agentIds: ["agent_b"] });
    expect(scopeReachesSession(listed, { ...session, names: ["user-42/chat-1"] })).toBe(false);
  });

  it("takes no session id for a name in it, whatever the prefix", () => {
    expect(scopeNamesInNamespace(scope, "user-42/x")).toBe(true);
    expect(scopeNamesInNamespace(scope, "user-42")).toBe(false);
    const loose = token({ sessionNamespace: "s" });
    expect(scopeNamesInNamespace(loose, "sesn_0123")).toBe(false);
    expect(scopeNamesInNamespace(loose, "support/1")).toBe(true);
    expect(scopeNamesInNamespace(UNSCOPED, "anything")).toBe(true);
  });

  it("starts a session only under a name inside the namespace, with create", () => {
    expect(scopeMayStart(scope, "agent_a", "user-42/chat-2")).toBe(true);
    expect(scopeMayStart(scope, "agent_a")).toBe(false);
    expect(scopeMayStart(scope, "agent_a", "user-7/chat-2")).toBe(false);
    expect(scopeMayStart(scope, "agent_a", "sesn_0123")).toBe(false);
    expect(scopeMayStart({ ...scope, operations: ["read", "send"] }, "agent_a", "user-42/x")).toBe(false);
    // Without a namespace nothing changes: a name or none.
    expect(scopeMayStart(token({}), "agent_a")).toBe(true);
    expect(scopeMayStart(token({}), "agent_a", "user-7/x")).toBe(true);
    expect(scopeMayStart(token({ sessionId: "sesn_a" }), "agent_a", "user-42/x")).toBe(false);
  });

  it("is no unscoped caller", () => {
    expect(isUnscoped(UNSCOPED)).toBe(true);
    expect(isUnscoped({ ...UNSCOPED, sessionNamespace: "user-42/" })).toBe(false);
  });
});

describe("narrowScope", () => {
  const key: CallerScope = {
    agentIds: ["agent_a"],
    sessionId: null,
    sessionNamespace: null,
    operations: null,
  };

  it("keeps the minter's agents and takes the token's namespace", () => {
    const scope = narrowScope(key, {
      agentIds: null,
      sessionId: null,
      sessionNamespace: "user-42/",
      operations: ["read", "create"],
    });
    expect(scope).toEqual({
      agentIds: ["agent_a"],
      sessionId: null,
      sessionNamespace: "user-42/",
      operations: ["read", "create"],
    });
    // Claims from before namespaces carry none.
    expect(
      narrowScope(key, { agentIds: null, sessionId: "sesn_a", operations: ["read"] }).sessionNamespace,
    ).toBe(null);
  });

  it("never widens a minter's namespace: the narrower of two, nothing for disjoint ones", () => {
    const held = { ...key, sessionNamespace: "user-42/" };
    const ask = (sessionNamespace: string | null) =>
      narrowScope(held, { agentIds: null, sessionId: null, sessionNamespace, operations: ["read"] });
    expect(ask(null).sessionNamespace).toBe("user-42/");
    expect(ask("user-").sessionNamespace).toBe("user-42/");
    expect(ask("user-42/chats/").sessionNamespace).toBe("user-42/chats/");
    expect(ask("user-7/").agentIds).toEqual([]);
  });
});

describe("sessionNamespaceProblem", () => {
  it("takes 1-128 printable ASCII characters without whitespace, not a session id's prefix", () => {
    for (const ok of ["user-42/", "a", "tenant:9|", "x".repeat(128)])
      expect(sessionNamespaceProblem("session_namespace", ok), ok).toBeNull();
    for (const bad of ["", "x".repeat(129), "user 42/", "user\t42", "usér/", "user\n", "sesn_", "sesn_abc"])
      expect(sessionNamespaceProblem("session_namespace", bad), JSON.stringify(bad)).toMatch(
        /^session_namespace: /,
      );
  });
});

describe("access token claims", () => {
  const key = Buffer.alloc(32, 7);
  const base: AccessTokenClaims = {
    id: "atok_x",
    workspaceId: "wrkspc_default",
    keyId: "key_x",
    agentIds: null,
    sessionId: null,
    sessionNamespace: null,
    operations: ["read"],
    issuedAt: 1,
    expiresAt: 2,
  };
  /** A token as the server signed them before namespaces (and signs them still without one). */
  const signed = (payload: Record<string, unknown>) => {
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    const signature = createHmac("sha256", key).update("awaken access token v1\n").update(body).digest();
    return `awt_${body}.${signature.toString("base64url")}`;
  };
  const v1 = {
    v: 1,
    id: "atok_x",
    ws: "wrkspc_default",
    kid: "key_x",
    agents: null,
    sid: null,
    ops: ["read"],
    iat: 1,
    exp: 2,
  };

  it("a token minted before namespaces still verifies, with none; one without a namespace is still v1", () => {
    expect(decodeAccessToken(key, signed(v1))).toEqual(base);
    expect(encodeAccessToken(key, base)).toBe(signed(v1));
  });

  it("a namespace is signed with the rest, as v2, which a server knowing only v1 refuses", () => {
    const claims = { ...base, sessionNamespace: "user-42/", operations: ["read", "create"] as const };
    const encoded = encodeAccessToken(key, { ...claims, operations: [...claims.operations] });
    expect(decodeAccessToken(key, encoded)).toEqual({ ...claims, operations: ["read", "create"] });
    const payload = JSON.parse(Buffer.from(encoded.slice(4).split(".")[0]!, "base64url").toString("utf8"));
    expect(payload).toMatchObject({ v: 2, ns: "user-42/" });
    // Altering it breaks the signature.
    const widened = Buffer.from(JSON.stringify({ ...payload, ns: "user-" })).toString("base64url");
    expect(decodeAccessToken(key, `awt_${widened}.${encoded.split(".")[1]}`)).toBeNull();
    // Shapes the server never signs are no token even when signed: v1 with a namespace, v2 without.
    expect(decodeAccessToken(key, signed({ ...v1, ns: "user-42/" }))).toBeNull();
    expect(decodeAccessToken(key, signed({ ...v1, v: 2 }))).toBeNull();
    expect(decodeAccessToken(key, signed({ ...v1, v: 2, ns: 42 }))).toBeNull();
  });
});
