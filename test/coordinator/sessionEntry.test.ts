import { afterEach, describe, expect, it } from "vitest";
import { claimName } from "../../src/coordinator/sessionEntryNames.js";
import { systemClock } from "../../src/kernel/clock.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { type EntryBackend, type EntryStack, openEntryStacks } from "./entryStack.js";

// The session entry over real stores and services: default environment, client-named sessions,
// workspace isolation and the concurrent first uses, on SQLite and on PostgreSQL across replicas.

const WS = "wrkspc_a";
const OTHER = "wrkspc_b";
let closeStacks: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeStacks?.();
  closeStacks = undefined;
});

async function open(backend: EntryBackend, timing?: Parameters<typeof openEntryStacks>[1]) {
  const stacks = await openEntryStacks(backend, timing);
  closeStacks = stacks.close;
  const agentOf = async (stack: EntryStack, ws: string) =>
    (await stack.agents.create({ workspaceId: ws, actor: "cli" }, { name: "a", model: "claude-sonnet-4-5" }))
      .head.id;
  return { ...stacks, agentOf };
}

async function allSessions(stack: EntryStack, ws: string) {
  return (await stack.sessions.list(ws, { limit: 100, cursor: null, order: "asc", includeArchived: true }))
    .data;
}

async function allEnvironments(stack: EntryStack, ws: string) {
  return (await stack.environments.list(ws, { limit: 100, cursor: null, includeArchived: true })).data;
}

async function errorOf(promise: Promise<unknown>): Promise<AwakenError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof AwakenError)) throw new Error(`expected an AwakenError, got ${String(error)}`);
  return error;
}

const BACKENDS: EntryBackend[] = ["SQLite", "PostgreSQL"];

describe.each(BACKENDS)("session entry on %s", (backend) => {
  const skip = backend === "PostgreSQL" ? postgresUnavailable() : null;

  it.skipIf(skip)(
    "start without an environment makes the workspace's default one once, as an ordinary environment",
    async () => {
      const { a, agentOf } = await open(backend);
      const agent = await agentOf(a, WS);
      const first = await a.entry.start({ workspaceId: WS, agent: { id: agent } });
      const second = await a.entry.start({ workspaceId: WS, agent: { id: agent } });
      expect(second.environmentId).toBe(first.environmentId);
      const envs = await allEnvironments(a, WS);
      expect(envs.map((e) => e.id)).toEqual([first.environmentId]);
      expect(envs[0]).toMatchObject({ name: "default", config: { type: "cloud" }, archivedAt: null });
      expect(first).toMatchObject({ title: null, metadata: {}, vaultIds: [], budget: null, status: "idle" });
      // Another workspace gets its own.
      const other = await a.entry.start({ workspaceId: OTHER, agent: { id: await agentOf(a, OTHER) } });
      expect(other.environmentId).not.toBe(first.environmentId);
    },
  );

  it.skipIf(skip)("concurrent first starts make one default environment", async () => {
    const { a, b, agentOf } = await open(backend);
    const agent = await agentOf(a, WS);
    const started = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? a : b).entry.start({ workspaceId: WS, agent: { id: agent } }),
      ),
    );
    expect(new Set(started.map((s) => s.environmentId)).size).toBe(1);
    expect(await allEnvironments(a, WS)).toHaveLength(1);
  });

  it.skipIf(skip)(
    "an archived or deleted default environment is replaced; a named one is used as is",
    async () => {
      const { a, agentOf } = await open(backend);
      const agent = await agentOf(a, WS);
      const first = await a.entry.start({ workspaceId: WS, agent: { id: agent } });
      await a.environments.archive({ workspaceId: WS, actor: "cli" }, first.environmentId);
      const second = await a.entry.start({ workspaceId: WS, agent: { id: agent } });
      expect(second.environmentId).not.toBe(first.environmentId);
      await a.environments.delete({ workspaceId: WS, actor: "cli" }, second.environmentId);
      const third = await a.entry.start({ workspaceId: WS, agent: { id: agent } });
      expect([first.environmentId, second.environmentId]).not.toContain(third.environmentId);
      const mine = await a.environments.create(
        { workspaceId: WS, actor: "cli" },
        {
          name: "mine",
          description: null,
          scope: null,
          metadata: {},
          config: null,
        },
      );
      const named = await a.entry.start({ workspaceId: WS, agent: { id: agent }, environmentId: mine.id });
      expect(named.environmentId).toBe(mine.id);
      // An archived environment the client named stays refused (as on the Managed wire).
      await a.environments.archive({ workspaceId: WS, actor: "cli" }, mine.id);
      const refused = await errorOf(
        a.entry.start({ workspaceId: WS, agent: { id: agent }, environmentId: mine.id }),
      );
      expect(refused.code).toBe("environment_archived");
    },
  );

  it.skipIf(skip)("a bad agent reference makes neither a session nor a default environment", async () => {
    const { a } = await open(backend);
    const error = await errorOf(a.entry.start({ workspaceId: WS, agent: { id: "agent_missing" } }));
    expect(error.code).toBe("not_found");
    expect(await allEnvironments(a, WS)).toEqual([]);
    expect(await allSessions(a, WS)).toEqual([]);
  });

  it.skipIf(skip)(
    "findNamed: a session id names itself in its workspace only; a name after its first use",
    async () => {
      const { a, agentOf } = await open(backend);
      const agent = await agentOf(a, WS);
      const byId = await a.entry.start({ workspaceId: WS, agent: { id: agent } });
      expect((await a.entry.findNamed(WS, byId.id))?.id).toBe(byId.id);
      expect(await a.entry.findNamed(OTHER, byId.id)).toBeNull();
      expect(await a.entry.findNamed(WS, "chat-1")).toBeNull();

      const named = await a.entry.openNamed(WS, "chat-1", { agent: { id: agent }, title: "t" });
      expect(named.title).toBe("t");
      expect((await a.entry.findNamed(WS, "chat-1"))?.id).toBe(named.id);
      expect((await a.entry.openNamed(WS, "chat-1", { agent: { id: agent }, title: "ignored" })).id).toBe(
        named.id,
      );
      // Another workspace's use of the same name is its own session; neither sees the other's.
      expect(await a.entry.findNamed(OTHER, "chat-1")).toBeNull();
      const theirs = await a.entry.openNamed(OTHER, "chat-1", { agent: { id: await agentOf(a, OTHER) } });
      expect(theirs.id).not.toBe(named.id);
      expect(theirs.workspaceId).toBe(OTHER);
      expect((await a.entry.findNamed(WS, "chat-1"))?.id).toBe(named.id);
    },
  );

  it.skipIf(skip)("openNamed with a session id opens that session, never another workspace's", async () => {
    const { a, agentOf } = await open(backend);
    const agent = await agentOf(a, WS);
    const session = await a.entry.start({ workspaceId: WS, agent: { id: agent } });
    expect((await a.entry.openNamed(WS, session.id, { agent: { id: agent } })).id).toBe(session.id);
    const foreign = await errorOf(
      a.entry.openNamed(OTHER, session.id, { agent: { id: await agentOf(a, OTHER) } }),
    );
    expect(foreign.code).toBe("not_found");
    expect(await allSessions(a, OTHER)).toEqual([]);
    const unknown = await errorOf(a.entry.openNamed(WS, "sesn_unknown", { agent: { id: agent } }));
    expect(unknown.code).toBe("not_found");
    expect(await allSessions(a, WS)).toHaveLength(1);
  });

  it.skipIf(skip)("concurrent first uses of one name end with one session, and no other", async () => {
    const { a, b, agentOf } = await open(backend);
    const agent = await agentOf(a, WS);
    // Counted where sessions are made: a loser is avoided, not created and undone.
    let creates = 0;
    for (const stack of new Set([a, b])) {
      const create = stack.sessions.create.bind(stack.sessions);
      stack.sessions.create = (cmd) => {
        creates++;
        return create(cmd);
      };
    }
    for (const name of ["race-1", "race-2"]) {
      const opened = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 ? a : b).entry.openNamed(WS, name, { agent: { id: agent } }),
        ),
      );
      expect(new Set(opened.map((s) => s.id)).size).toBe(1);
      expect((await a.entry.findNamed(WS, name))?.id).toBe(opened[0]!.id);
    }
    expect(creates).toBe(2);
    // No loser's session exists, not even archived.
    expect(await allSessions(a, WS)).toHaveLength(2);
    expect(await allEnvironments(a, WS)).toHaveLength(1);
  });

  it.skipIf(skip)(
    "a deleted session's name resolves to nothing, and its next use starts a new session",
    async () => {
      const { a, agentOf } = await open(backend);
      const agent = await agentOf(a, WS);
      const first = await a.entry.openNamed(WS, "thread-9", { agent: { id: agent } });
      await a.sessions.delete(WS, first.id);
      expect(await a.entry.findNamed(WS, "thread-9")).toBeNull();
      expect(await a.names.get(WS, "session", "thread-9")).toBeNull();
      const second = await a.entry.openNamed(WS, "thread-9", { agent: { id: agent } });
      expect(second.id).not.toBe(first.id);
      expect((await a.entry.findNamed(WS, "thread-9"))?.id).toBe(second.id);
    },
  );

  it.skipIf(skip)("a failed first use leaves the name free", async () => {
    const { a, agentOf } = await open(backend);
    const error = await errorOf(a.entry.openNamed(WS, "chat", { agent: { id: "agent_missing" } }));
    expect(error.code).toBe("not_found");
    expect(await a.names.get(WS, "session", "chat")).toBeNull();
    const session = await a.entry.openNamed(WS, "chat", { agent: { id: await agentOf(a, WS) } });
    expect((await a.entry.findNamed(WS, "chat"))?.id).toBe(session.id);
  });

  it.skipIf(skip)(
    "refuses names that are empty, too long or unprintable with a 400, writing nothing",
    async () => {
      const { a, agentOf } = await open(backend);
      const agent = await agentOf(a, WS);
      const bad = [
        "",
        "x".repeat(257),
        "a\u0000b",
        "line\nbreak",
        "tab\there",
        "\u007f",
        "bidi\u202eflip",
        "zero\u200bwidth",
        "sep\u2028x",
        "\ud800",
      ];
      for (const name of bad) {
        const opened = await errorOf(a.entry.openNamed(WS, name, { agent: { id: agent } }));
        expect(opened.category).toBe("invalid");
        expect(opened.message).toMatch(/^session name: must be 1-256 printable characters/);
        expect((await errorOf(a.entry.findNamed(WS, name))).category).toBe("invalid");
      }
      expect(await allSessions(a, WS)).toEqual([]);
      expect(await allEnvironments(a, WS)).toEqual([]);
      // The limit counts characters, not UTF-16 units; spaces and non-Latin scripts are printable.
      for (const name of ["😀".repeat(256), "x".repeat(256), "chat 1", "会話-١٢٣", " padded "]) {
        const session = await a.entry.openNamed(WS, name, { agent: { id: agent } });
        expect((await a.entry.findNamed(WS, name))?.id).toBe(session.id);
      }
    },
  );
});

describe("name claims when a creator outlives its reservation", () => {
  it("a stale reservation is taken over; a late creator discards its target and answers with the bound one", async () => {
    const { a, agentOf } = await open("SQLite", { staleAfterMs: 40, minPollMs: 5, maxPollMs: 10 });
    const agent = await agentOf(a, WS);
    // A creator that died after reserving: the next use waits out the reservation, then takes it.
    expect(await a.names.reserve(WS, "session", "stuck", "dead", Date.now(), 0)).toBe(true);
    const started = Date.now();
    const session = await a.entry.openNamed(WS, "stuck", { agent: { id: agent } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect((await a.entry.findNamed(WS, "stuck"))?.id).toBe(session.id);

    // A creator whose reservation another caller took over and bound while it was creating.
    const discarded: string[] = [];
    const key = { workspaceId: WS, space: "session" as const, name: "late" };
    const result = await claimName(
      a.names,
      systemClock,
      { staleAfterMs: 40, minPollMs: 5, maxPollMs: 10 },
      key,
      {
        existing: async (id) => id,
        create: async () => {
          const now = Date.now();
          expect(await a.names.reserve(WS, "session", "late", "taker", now, now + 1)).toBe(true);
          expect(await a.names.bind(WS, "session", "late", "taker", "theirs", now)).toBe(true);
          return { id: "mine", value: "mine" };
        },
        discard: async (value) => {
          discarded.push(value);
        },
      },
    );
    expect(result).toBe("theirs");
    expect(discarded).toEqual(["mine"]);
  });
});
