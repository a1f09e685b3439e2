import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  all,
  BAD_REQUEST,
  createSession,
  expectApiError,
  history,
  idsOf,
  isEndTurnIdle,
  MODEL,
  NOT_FOUND,
  RFC3339,
  runTurn,
  StreamReader,
  sleep,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

describe("agents", () => {
  it("create answers the full resolved agent, and retrieve returns the same object", async () => {
    const agent = await t.client.beta.agents.create({ name: "Full", model: MODEL });
    expect(agent).toMatchObject({
      type: "agent",
      name: "Full",
      description: null,
      system: null,
      model: { id: MODEL },
      tools: [],
      mcp_servers: [],
      skills: [],
      metadata: {},
      multiagent: null,
      execution_identity: { type: "service_account" },
      version: 1,
      archived_at: null,
    });
    expect(agent.id).toMatch(/^agent_/);
    expect([agent.created_at, agent.updated_at]).toEqual([expect.stringMatching(RFC3339), agent.created_at]);
    expect(await t.client.beta.agents.retrieve(agent.id)).toEqual(agent);
  });

  it("update: a change mints a new version, no change keeps it, null clears description, metadata is a patch", async () => {
    const agent = await t.client.beta.agents.create({
      name: "Versions",
      model: MODEL,
      description: "first",
      metadata: { team: "a", keep: "yes" },
    });
    const v2 = await t.client.beta.agents.update(agent.id, { version: 1, name: "Versions v2" });
    expect(v2).toMatchObject({ version: 2, name: "Versions v2", description: "first" });

    const same = await t.client.beta.agents.update(agent.id, { name: "Versions v2", description: "first" });
    expect(same.version).toBe(2);
    expect(same).toEqual(v2);

    const v3 = await t.client.beta.agents.update(agent.id, { description: null });
    expect(v3).toMatchObject({ version: 3, description: null, name: "Versions v2" });

    const v4 = await t.client.beta.agents.update(agent.id, { metadata: { team: null, added: "1" } });
    expect(v4).toMatchObject({ version: 4, metadata: { keep: "yes", added: "1" } });

    expect(await t.client.beta.agents.retrieve(agent.id, { version: 1 })).toMatchObject({
      version: 1,
      name: "Versions",
      description: "first",
      metadata: { team: "a", keep: "yes" },
    });
    expect((await t.client.beta.agents.retrieve(agent.id)).version).toBe(4);

    const versions = await all(t.client.beta.agents.versions.list(agent.id));
    expect(versions.map((v) => v.version).sort()).toEqual([1, 2, 3, 4]);
    const paged = await all(t.client.beta.agents.versions.list(agent.id, { limit: 1 }));
    expect(paged.map((v) => v.version)).toEqual(versions.map((v) => v.version));
    for (const version of versions) {
      expect(version.id).toBe(agent.id);
      expect(await t.client.beta.agents.retrieve(agent.id, { version: version.version })).toMatchObject({
        name: version.name,
        description: version.description,
        metadata: version.metadata,
      });
    }
  });

  it("archive hides the agent from list unless include_archived, and an archived agent starts no sessions", async () => {
    const agent = await t.client.beta.agents.create({ name: "Archived", model: MODEL });
    const env = await t.client.beta.environments.create({ name: "for archived agent" });
    const archived = await t.client.beta.agents.archive(agent.id);
    expect(archived.archived_at).toMatch(RFC3339);
    expect(archived.version).toBe(1);

    const visible = await all(t.client.beta.agents.list({ limit: 100 }));
    expect(visible.some((a) => a.id === agent.id)).toBe(false);
    const everything = await all(t.client.beta.agents.list({ limit: 100, include_archived: true }));
    expect(everything.find((a) => a.id === agent.id)?.archived_at).toBe(archived.archived_at);

    await expectApiError(
      t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [agent.id, /archived/] },
    );
    await expectApiError(t.client.beta.agents.update(agent.id, { name: "x" }), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: [/archived/],
    });
  });

  it("agent_toolset_20260401 and mcp_toolset are stored and echoed with resolved permission policies", async () => {
    const agent = await t.client.beta.agents.create({
      name: "Toolsets",
      model: MODEL,
      mcp_servers: [{ name: "docs", type: "url", url: "https://mcp.example.com/sse" }],
      tools: [
        {
          type: "agent_toolset_20260401",
          configs: [
            { name: "bash", permission_policy: { type: "always_ask" } },
            { name: "web_fetch", enabled: false },
          ],
        },
        { type: "mcp_toolset", mcp_server_name: "docs", configs: [{ name: "search", enabled: true }] },
      ],
    });
    expect(agent.mcp_servers).toEqual([{ name: "docs", type: "url", url: "https://mcp.example.com/sse" }]);
    expect(agent.tools).toEqual([
      {
        type: "agent_toolset_20260401",
        default_config: { enabled: true, permission_policy: { type: "always_allow" } },
        configs: [
          { name: "bash", type: "bash", enabled: true, permission_policy: { type: "always_ask" } },
          {
            name: "web_fetch",
            type: "web_fetch",
            enabled: false,
            permission_policy: { type: "always_allow" },
            url_sources: null,
          },
        ],
      },
      {
        type: "mcp_toolset",
        mcp_server_name: "docs",
        default_config: { enabled: true, permission_policy: { type: "always_ask" } },
        configs: [{ name: "search", enabled: true, permission_policy: { type: "always_ask" } }],
      },
    ]);
    expect((await t.client.beta.agents.retrieve(agent.id)).tools).toEqual(agent.tools);

    await expectApiError(
      t.client.beta.agents.create({
        name: "Dangling server",
        model: MODEL,
        mcp_servers: [{ name: "orphan", type: "url", url: "https://mcp.example.com" }],
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/"orphan"/, /mcp_toolset/] },
    );
  });
});

describe("environments", () => {
  it("create, retrieve, update (metadata patch), list, archive and delete", async () => {
    const env = await t.client.beta.environments.create({
      name: "Env",
      description: "desc",
      metadata: { a: "1", b: "2" },
    });
    expect(env).toMatchObject({
      type: "environment",
      name: "Env",
      description: "desc",
      metadata: { a: "1", b: "2" },
      config: {
        type: "cloud",
        networking: { type: "unrestricted" },
        packages: { apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] },
      },
      archived_at: null,
    });
    expect(env.id).toMatch(/^env_/);
    expect(await t.client.beta.environments.retrieve(env.id)).toEqual(env);

    const updated = await t.client.beta.environments.update(env.id, {
      name: "Env renamed",
      metadata: { a: null, b: "", c: "3" },
      config: { type: "cloud", networking: { type: "limited", allowed_hosts: ["example.com"] } },
    });
    expect(updated).toMatchObject({
      name: "Env renamed",
      description: "desc",
      metadata: { c: "3" },
      config: {
        type: "cloud",
        networking: {
          type: "limited",
          allowed_hosts: ["example.com"],
          allow_mcp_servers: false,
          allow_package_managers: false,
        },
      },
    });
    expect(await t.client.beta.environments.retrieve(env.id)).toEqual(updated);

    const listed = await all(t.client.beta.environments.list({ limit: 100 }));
    expect(listed.find((e) => e.id === env.id)).toEqual(updated);
    const paged = await all(t.client.beta.environments.list({ limit: 1 }));
    expect(idsOf(paged)).toEqual(idsOf(listed));

    const archived = await t.client.beta.environments.archive(env.id);
    expect(archived.archived_at).toMatch(RFC3339);
    const listedIds = async (include_archived: boolean) =>
      idsOf(await all(t.client.beta.environments.list({ limit: 100, include_archived })));
    expect(await listedIds(false)).not.toContain(env.id);
    expect(await listedIds(true)).toContain(env.id);

    const deleted = await t.client.beta.environments.delete(env.id);
    expect(deleted).toMatchObject({ id: env.id, type: "environment_deleted" });
    await expectApiError(t.client.beta.environments.retrieve(env.id), Anthropic.NotFoundError, NOT_FOUND);
  });
});

describe("sessions", () => {
  it("a string agent pins the latest version; {type:'agent', id, version} pins that version even after updates", async () => {
    const agent = await t.client.beta.agents.create({ name: "Pinned v1", model: MODEL, system: "one" });
    const env = await t.client.beta.environments.create({ name: "pins" });
    await t.client.beta.agents.update(agent.id, { name: "Pinned v2", system: "two" });

    const latest = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const pinned = await t.client.beta.sessions.create({
      agent: { type: "agent", id: agent.id, version: 1 },
      environment_id: env.id,
      title: "pinned",
    });
    expect(latest).toMatchObject({ type: "session", status: "idle", environment_id: env.id, title: null });
    expect(latest.agent).toMatchObject({ id: agent.id, type: "agent", version: 2, name: "Pinned v2" });
    expect(pinned.agent).toMatchObject({ id: agent.id, version: 1, name: "Pinned v1", system: "one" });
    expect(pinned).toMatchObject({
      resources: [],
      vault_ids: [],
      metadata: {},
      budget: null,
      archived_at: null,
    });
    expect(pinned.id).toMatch(/^sesn_/);

    await t.client.beta.agents.update(agent.id, { name: "Pinned v3" });
    expect((await t.client.beta.sessions.retrieve(pinned.id)).agent).toEqual(pinned.agent);
    expect((await t.client.beta.sessions.retrieve(latest.id)).agent).toEqual(latest.agent);
    const byVersion = await t.client.beta.sessions.list({ agent_id: agent.id, agent_version: 1 });
    expect(idsOf(byVersion.data)).toEqual([pinned.id]);
  });

  it("initial_events start a turn at creation", async () => {
    const { agent, environment } = await createSession(t.client);
    const session = await t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      initial_events: [userMessage("hello from creation")],
    });
    const events = await waitForHistory(t.client, session.id, (e) => e.some(isEndTurnIdle));
    expect(events[0]).toMatchObject({ type: "user.message" });
    expect(textOf(events.find((e) => e.type === "agent.message"))).toBe(
      "[offline model] You said: hello from creation",
    );
  });

  it("update of title and metadata emits session.updated with only the changes; no change emits nothing", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const change = { title: "Renamed", metadata: { k: "v" } };
    expect(await t.client.beta.sessions.update(session.id, change)).toMatchObject(change);
    const event = await reader.until((e) => e.type === "session.updated");
    expect(event).toMatchObject(change);
    expect(event).not.toHaveProperty("budget");

    await t.client.beta.sessions.update(session.id, change);
    await t.client.beta.sessions.update(session.id, { metadata: { k: null } });
    const second = await reader.until((e) => e.type === "session.updated", {
      from: reader.events.indexOf(event) + 1,
    });
    expect(second).toMatchObject({ metadata: {} });
    expect(second).not.toHaveProperty("title");
    await reader.close();
    const updates = (await history(t.client, session.id)).filter((e) => e.type === "session.updated");
    expect(idsOf(updates)).toEqual([event.id, second.id]);
  });

  it("archive reads terminated and hides the session from list; delete makes it 404", async () => {
    const { agent, session } = await createSession(t.client);
    const archived = await t.client.beta.sessions.archive(session.id);
    expect(archived).toMatchObject({ status: "terminated" });
    expect(archived.archived_at).toMatch(RFC3339);
    expect((await t.client.beta.sessions.list({ agent_id: agent.id })).data).toEqual([]);
    const withArchived = await t.client.beta.sessions.list({ agent_id: agent.id, include_archived: true });
    expect(withArchived.data.map((s) => [s.id, s.status])).toEqual([[session.id, "terminated"]]);

    const deleted = await t.client.beta.sessions.delete(session.id);
    expect(deleted).toMatchObject({ id: session.id, type: "session_deleted" });
    const notFound = { ...NOT_FOUND, message: [session.id] };
    await expectApiError(t.client.beta.sessions.retrieve(session.id), Anthropic.NotFoundError, notFound);
    await expectApiError(t.client.beta.sessions.events.list(session.id), Anthropic.NotFoundError, notFound);
    await expectApiError(t.client.beta.sessions.delete(session.id), Anthropic.NotFoundError, notFound);
  });
});

describe("pagination", () => {
  let fresh: TestServer;
  beforeAll(async () => {
    fresh = await startTestServer({ workers: 1 });
  });
  afterAll(async () => {
    await fresh.close();
  });

  it("25 agents come back exactly once through the SDK's auto-pagination at limit 10; the last page has next_page null", async () => {
    const created = new Set<string>();
    for (let i = 0; i < 25; i++) {
      created.add((await fresh.client.beta.agents.create({ name: `Paged ${i}`, model: MODEL })).id);
    }
    const seen = await all(fresh.client.beta.agents.list({ limit: 10 }));
    expect(seen).toHaveLength(25);
    expect(new Set(idsOf(seen))).toEqual(created);

    const pages = await all((await fresh.client.beta.agents.list({ limit: 10 })).iterPages());
    expect(pages.map((p) => p.data.length)).toEqual([10, 10, 5]);
    expect(pages.map((p) => p.next_page === null)).toEqual([false, false, true]);
  });

  it("sessions list pages both ways with next_page / prev_page, honours order and statuses[]", async () => {
    const { agent, environment } = await createSession(fresh.client);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        (await fresh.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id })).id,
      );
    }
    const everything = (await fresh.client.beta.sessions.list({ agent_id: agent.id, limit: 100 })).data;
    expect(everything).toHaveLength(5);
    const times = everything.map((s) => Date.parse(s.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times); // default order: newest first
    const asc = (await fresh.client.beta.sessions.list({ agent_id: agent.id, order: "asc" })).data;
    expect(idsOf(asc)).toEqual(idsOf(everything).reverse());

    const query = { agent_id: agent.id, limit: 2 };
    const p1 = await fresh.client.beta.sessions.list(query);
    const p2 = await fresh.client.beta.sessions.list({ ...query, page: p1.next_page });
    const p3 = await fresh.client.beta.sessions.list({ ...query, page: p2.next_page });
    expect([p1, p2, p3].map((p) => p.data.length)).toEqual([2, 2, 1]);
    expect(idsOf([...p1.data, ...p2.data, ...p3.data])).toEqual(idsOf(everything));
    expect(p1.prev_page).toBeNull();
    expect(p3.next_page).toBeNull();
    const back2 = await fresh.client.beta.sessions.list({ ...query, page: p3.prev_page });
    expect(idsOf(back2.data)).toEqual(idsOf(p2.data));
    const back1 = await fresh.client.beta.sessions.list({ ...query, page: back2.prev_page });
    expect(idsOf(back1.data)).toEqual(idsOf(p1.data));
    expect(back1.prev_page).toBeNull();
    expect(back1.next_page).not.toBeNull();
    expect(await all(fresh.client.beta.sessions.list(query))).toHaveLength(5);

    await fresh.client.beta.sessions.archive(ids[1] as string);
    const idle = await fresh.client.beta.sessions.list({
      agent_id: agent.id,
      statuses: ["idle"],
      include_archived: true,
    });
    const notArchived = idsOf(everything).filter((id) => id !== ids[1]);
    expect(idsOf(idle.data).sort()).toEqual(notArchived.sort());
    const terminated = await fresh.client.beta.sessions.list({
      agent_id: agent.id,
      statuses: ["terminated", "running"],
      include_archived: true,
    });
    expect(idsOf(terminated.data)).toEqual([ids[1]]);
  });

  it("events list: default asc, order desc, types[], created_at[gte] and paging", async () => {
    const { session } = await createSession(fresh.client);
    const reader = await StreamReader.open(fresh.client, session.id);
    await runTurn(fresh.client, reader, session.id, "first");
    await sleep(5);
    await runTurn(fresh.client, reader, session.id, "second");
    await reader.close();
    const full = await history(fresh.client, session.id);
    expect(idsOf(full)).toEqual(idsOf(reader.events));

    const desc = await all(fresh.client.beta.sessions.events.list(session.id, { order: "desc" }));
    expect(idsOf(desc)).toEqual(idsOf(full).reverse());

    const typed = await all(
      fresh.client.beta.sessions.events.list(session.id, { types: ["user.message", "agent.message"] }),
    );
    expect(typed.map((e) => [e.type, textOf(e as unknown as WireEvent)])).toEqual([
      ["user.message", "first"],
      ["agent.message", "[offline model] You said: first"],
      ["user.message", "second"],
      ["agent.message", "[offline model] You said: second"],
    ]);

    const secondMessage = typed[2] as unknown as WireEvent;
    const since = secondMessage.processed_at as string;
    const recent = await all(
      fresh.client.beta.sessions.events.list(session.id, { "created_at[gte]": since }),
    );
    const atOrAfter = full.filter((e) => Date.parse(e.processed_at as string) >= Date.parse(since));
    expect(idsOf(recent)).toEqual(idsOf(atOrAfter));
    expect(idsOf(recent)).toContain(secondMessage.id);
    expect(recent.some((e) => textOf(e as unknown as WireEvent) === "first")).toBe(false);

    const pages = await all(
      (await fresh.client.beta.sessions.events.list(session.id, { limit: 3 })).iterPages(),
    );
    expect(pages.flatMap((p) => idsOf(p.data))).toEqual(idsOf(full));
    expect(pages.slice(0, -1).every((p) => p.data.length === 3 && p.next_page !== null)).toBe(true);
    expect(pages.at(-1)?.next_page).toBeNull();
  });
});
