/**
 * The MCP edge's own state: its sessions are scoped to the workspace that opened them and bounded,
 * and tool names are valid, unique and derived only from the agent.
 */
import { describe, expect, it } from "vitest";
import { agentIdOfToolName, toolNameOf } from "../../src/edge/mcp/agentTools.js";
import { type McpSession, McpSessionRegistry } from "../../src/edge/mcp/mcpSessions.js";

function session(id: string, workspaceId: string, closed: string[], owner = "key:k1"): McpSession {
  return {
    id,
    workspaceId,
    listed: null,
    ending: false,
    lastUsedAt: 0,
    owner,
    services: {} as McpSession["services"],
    transport: {} as McpSession["transport"],
    server: { close: async () => void closed.push(id) } as unknown as McpSession["server"],
  };
}

describe("McpSessionRegistry", () => {
  it("a session id is found only with the workspace that opened it", () => {
    const registry = new McpSessionRegistry({ idleMs: 1_000, perWorkspace: 10 }, () => 0);
    registry.add(session("s1", "wrkspc_a", []));
    expect(registry.get("s1", "wrkspc_a", "key:k1")?.id).toBe("s1");
    expect(registry.get("s1", "wrkspc_b", "key:k1")).toBeNull();
    // Another key (or token) of the same workspace does not reach it either.
    expect(registry.get("s1", "wrkspc_a", "key:k2")).toBeNull();
    expect(registry.get("s2", "wrkspc_a", "key:k1")).toBeNull();
  });

  it("an ended session is gone, and its in-flight calls see it ending", () => {
    const registry = new McpSessionRegistry({ idleMs: 1_000, perWorkspace: 10 }, () => 0);
    const s = session("s1", "wrkspc_a", []);
    registry.add(s);
    registry.forget("s1");
    expect(s.ending).toBe(true);
    expect(registry.get("s1", "wrkspc_a", "key:k1")).toBeNull();
  });

  it("closes the least recently used session past the workspace's bound, and idle ones", async () => {
    let now = 0;
    const closed: string[] = [];
    // Three keys of one share each: the bound is the workspace's, not one key's.
    const registry = new McpSessionRegistry({ idleMs: 100, perWorkspace: 2 }, () => now);
    registry.add(session("old", "wrkspc_a", closed));
    now = 10;
    registry.add(session("newer", "wrkspc_a", closed, "key:k2"));
    registry.add(session("elsewhere", "wrkspc_b", closed));
    now = 20;
    registry.get("old", "wrkspc_a", "key:k1");
    registry.add(session("third", "wrkspc_a", closed, "key:k3"));
    await Promise.resolve();
    expect(closed).toEqual(["newer"]);
    now = 200;
    registry.get("third", "wrkspc_a", "key:k3");
    registry.closeIdle();
    await Promise.resolve();
    expect(closed.sort()).toEqual(["elsewhere", "newer", "old"]);
    expect(registry.get("third", "wrkspc_a", "key:k3")?.id).toBe("third");
  });

  it("one credential holds at most its share, and is refused past it rather than closing another's", async () => {
    const closed: string[] = [];
    const registry = new McpSessionRegistry({ idleMs: 60_000, perWorkspace: 8 }, () => 0);
    expect(registry.perPrincipal).toBe(2);
    registry.add(session("admin", "wrkspc_a", closed, "key:admin"));
    registry.add(session("t1", "wrkspc_a", closed, "token:t"));
    registry.add(session("t2", "wrkspc_a", closed, "token:t"));
    expect(registry.admits("wrkspc_a", "token:t")).toBe(false);
    expect(registry.admits("wrkspc_a", "key:admin")).toBe(true);
    // Initializes that raced past `admits`: the token's own oldest makes room.
    registry.add(session("t3", "wrkspc_a", closed, "token:t"));
    await Promise.resolve();
    expect(closed).toEqual(["t1"]);
    expect(registry.get("admin", "wrkspc_a", "key:admin")?.id).toBe("admin");
  });

  it("a full workspace makes room from the credentials holding the most, not from one holding fewer", async () => {
    let now = 0;
    const closed: string[] = [];
    const registry = new McpSessionRegistry({ idleMs: 60_000, perWorkspace: 8 }, () => now);
    // The admin's session is the oldest; tokens a, b and c hold their share of two each, d one.
    const owners = ["key:admin", "token:a", "token:a", "token:b", "token:b", "token:c", "token:c", "token:d"];
    owners.forEach((owner, i) => {
      now = i;
      registry.add(session(`s${i}`, "wrkspc_a", closed, owner));
    });
    now = 8;
    registry.add(session("e", "wrkspc_a", closed, "token:e"));
    await Promise.resolve();
    expect(closed).toEqual(["s1"]);
    expect(registry.get("s0", "wrkspc_a", "key:admin")?.id).toBe("s0");
  });
});

describe("tool names", () => {
  const id = "agent_01jh5x2k3m4n5p6q7r8s9t0vwx";

  it("are a slug of the agent's name and its id, in MCP's and model APIs' characters", () => {
    const name = toolNameOf(id, "Research Helper (beta)!");
    expect(name).toBe("research_helper_beta_01jh5x2k3m4n5p6q7r8s9t0vwx");
    expect(agentIdOfToolName(name)).toBe(id);
  });

  it("stay within 64 characters, and name the agent even without a usable name", () => {
    for (const agentName of ["x".repeat(300), "日本語", "", "___"]) {
      const name = toolNameOf(id, agentName);
      expect(name).toMatch(/^[a-z0-9_-]{1,64}$/);
      expect(agentIdOfToolName(name)).toBe(id);
    }
    expect(toolNameOf(id, "日本語")).toBe("agent_01jh5x2k3m4n5p6q7r8s9t0vwx");
  });

  it("differ for agents of one name", () => {
    expect(toolNameOf(id, "same")).not.toBe(toolNameOf("agent_01jh5x2k3m4n5p6q7r8s9t0vwy", "same"));
  });
});
