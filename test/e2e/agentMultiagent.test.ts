/**
 * An agent's `multiagent` configuration over the SDK: what a client sends is stored resolved, as the
 * SDK's response types say (defaults filled in, every roster entry an `{type:"agent", id, version}`),
 * echoed the same by create, retrieve, update, list and versions; an update merges into the stored
 * configuration level by level; a roster that breaks the SDK's rules is a 400 naming the field.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { all, BAD_REQUEST, expectApiError, MODEL } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;
const DEFAULT_SPAWNER = { type: "enabled", inline_agents: { type: "enabled" }, predefined_agents: [] };

describe.each(BACKENDS)("agents' multiagent configuration over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer(schema ? { databaseUrl: schema.url } : {});
    client = t.client;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  const agent = (
    name: string,
    multiagent?: Anthropic.Beta.Sessions.BetaManagedAgentsMultiagentParams | null,
  ) => client.beta.agents.create({ name, model: MODEL, ...(multiagent !== undefined ? { multiagent } : {}) });
  const ref = (a: { id: string }, version = 1) => ({ type: "agent", id: a.id, version });

  it("subagents with predefined agents (id, versioned reference, self) are stored resolved and echoed everywhere", async () => {
    const researcher = await agent("researcher");
    const writer = await agent("writer");
    await client.beta.agents.update(writer.id, { version: 1, system: "write well" });
    const lead = await agent("lead", {
      type: "multiagent_20261001",
      subagents: {
        type: "enabled",
        predefined_agents: [researcher.id, { type: "agent", id: writer.id, version: 1 }, { type: "self" }],
      },
    });
    const expected = {
      type: "multiagent_20261001",
      advisor: { type: "disabled" },
      subagents: {
        type: "enabled",
        inline_agents: { type: "enabled" },
        predefined_agents: [ref(researcher), ref(writer, 1), ref(lead)],
      },
      workflows: DEFAULT_SPAWNER,
    };
    expect(lead.multiagent).toEqual(expected);
    expect((await client.beta.agents.retrieve(lead.id)).multiagent).toEqual(expected);
    const listed = (await all(client.beta.agents.list())).find((a) => a.id === lead.id);
    expect(listed?.multiagent).toEqual(expected);
    const versions = await all(client.beta.agents.versions.list(lead.id));
    expect(versions.map((v) => v.multiagent)).toEqual([expected]);
    // An id string resolves to the agent's latest version.
    const latestWriter = await agent("lead2", {
      type: "multiagent_20261001",
      workflows: { type: "enabled", inline_agents: { type: "disabled" }, predefined_agents: [writer.id] },
    });
    expect(latestWriter.multiagent).toMatchObject({
      workflows: {
        type: "enabled",
        inline_agents: { type: "disabled" },
        predefined_agents: [ref(writer, 2)],
      },
    });
  });

  it("omitted and null members take their defaults; disabled stays disabled; an enabled advisor keeps its model", async () => {
    const bare = await agent("bare", { type: "multiagent_20261001" });
    expect(bare.multiagent).toEqual({
      type: "multiagent_20261001",
      advisor: { type: "disabled" },
      subagents: DEFAULT_SPAWNER,
      workflows: DEFAULT_SPAWNER,
    });
    const nulls = await agent("nulls", {
      type: "multiagent_20261001",
      advisor: { type: "enabled", model: "claude-opus-4-7" },
      subagents: { type: "disabled" },
      workflows: null,
    });
    expect(nulls.multiagent).toEqual({
      type: "multiagent_20261001",
      advisor: { type: "enabled", model: "claude-opus-4-7" },
      subagents: { type: "disabled" },
      workflows: DEFAULT_SPAWNER,
    });
    expect((await agent("none", null)).multiagent).toBeNull();
  });

  it("an update merges into the stored configuration level by level; self follows the new version; no change, no version", async () => {
    const helper = await agent("helper");
    const other = await agent("other");
    const lead = await agent("merging lead", {
      type: "multiagent_20261001",
      subagents: {
        type: "enabled",
        inline_agents: { type: "disabled" },
        predefined_agents: [helper.id, { type: "self" }],
      },
    });
    const advised = await client.beta.agents.update(lead.id, {
      version: 1,
      multiagent: { type: "multiagent_20261001", advisor: { type: "enabled", model: "claude-opus-4-7" } },
    });
    expect(advised.version).toBe(2);
    expect(advised.multiagent).toEqual({
      type: "multiagent_20261001",
      advisor: { type: "enabled", model: "claude-opus-4-7" },
      subagents: {
        type: "enabled",
        inline_agents: { type: "disabled" },
        predefined_agents: [ref(helper), ref(lead, 2)],
      },
      workflows: DEFAULT_SPAWNER,
    });
    // The same configuration again changes nothing: no version is minted.
    const same = await client.beta.agents.update(lead.id, {
      multiagent: { type: "multiagent_20261001", advisor: { type: "enabled", model: "claude-opus-4-7" } },
    });
    expect(same.version).toBe(2);
    // A sent list replaces the stored one; the member's other keys are kept.
    const replaced = await client.beta.agents.update(lead.id, {
      multiagent: {
        type: "multiagent_20261001",
        subagents: { type: "enabled", predefined_agents: [other.id] },
      },
    });
    expect(replaced.multiagent).toMatchObject({
      advisor: { type: "enabled", model: "claude-opus-4-7" },
      subagents: { type: "enabled", inline_agents: { type: "disabled" }, predefined_agents: [ref(other)] },
    });
    // Another field's change carries the configuration into the next version, self with it.
    const lead4 = await client.beta.agents.update(lead.id, {
      multiagent: {
        type: "multiagent_20261001",
        subagents: { type: "enabled", predefined_agents: [{ type: "self" }] },
      },
    });
    const lead5 = await client.beta.agents.update(lead.id, { system: "lead the team" });
    expect(lead4.multiagent).toMatchObject({ subagents: { predefined_agents: [ref(lead, 4)] } });
    expect(lead5.multiagent).toMatchObject({ subagents: { predefined_agents: [ref(lead, 5)] } });
    expect((await client.beta.agents.retrieve(lead.id, { version: 4 })).multiagent).toEqual(lead4.multiagent);
    // null clears it; a coordinator replaces a stored multiagent_20261001 whole.
    expect((await client.beta.agents.update(lead.id, { multiagent: null })).multiagent).toBeNull();
    const coordinator = await client.beta.agents.update(lead.id, {
      multiagent: {
        type: "coordinator",
        agents: [helper.id, { type: "advisor", model: "claude-opus-4-7" }, { type: "self" }],
      },
    });
    expect(coordinator.multiagent).toEqual({
      type: "coordinator",
      agents: [ref(helper), { type: "advisor", model: "claude-opus-4-7" }, ref(lead, 7)],
    });
  });

  it("a roster that breaks the rules is refused with a 400 naming the field", async () => {
    const plain = await agent("plain");
    const archived = await agent("archived");
    await client.beta.agents.archive(archived.id);
    const nested = await agent("nested", { type: "multiagent_20261001" });
    const refused = async (multiagent: unknown, ...message: Array<string | RegExp>) =>
      expectApiError(
        agent("refused", multiagent as Anthropic.Beta.Sessions.BetaManagedAgentsMultiagentParams),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message },
      );
    const subagents = (predefined: unknown[], inline = "enabled") => ({
      type: "multiagent_20261001",
      subagents: { type: "enabled", inline_agents: { type: inline }, predefined_agents: predefined },
    });
    await refused(subagents(["agent_nope"]), "multiagent.subagents.predefined_agents[0]", "does not exist");
    await refused(
      subagents([plain.id, archived.id]),
      "multiagent.subagents.predefined_agents[1]",
      "archived",
    );
    await refused(subagents([nested.id]), "multiagent.subagents.predefined_agents[0]", "depth limit 1");
    await refused(
      subagents([plain.id, { type: "agent", id: plain.id, version: 1 }]),
      "multiagent.subagents.predefined_agents[1]",
      "distinct",
    );
    await refused(subagents([{ type: "self" }, { type: "self" }]), "predefined_agents[1]", "self");
    await refused(
      subagents([{ type: "agent", id: plain.id, version: 9 }]),
      "predefined_agents[0]",
      "no version 9",
    );
    await refused(subagents([], "disabled"), "multiagent.subagents.predefined_agents", "at least one agent");
    await refused(
      { type: "multiagent_20261001", workflows: { type: "enabled", inline_agents: { type: "disabled" } } },
      "multiagent.workflows.predefined_agents",
    );
    await refused(
      subagents(Array.from({ length: 21 }, (_, i) => `agent_${i}`)),
      "multiagent.subagents.predefined_agents",
    );
    await refused({ type: "coordinator", agents: [] }, "multiagent.agents");
    await refused({ type: "coordinator", agents: [nested.id] }, "multiagent.agents[0]", "depth limit 1");
    await refused({ type: "multiagent_20261001", advisor: { type: "enabled" } }, "multiagent.advisor.model");
    await refused({ type: "swarm" }, "multiagent.type");
    // Nothing was created by a refused request, and an update is refused the same way.
    await expectApiError(
      client.beta.agents.update(plain.id, { multiagent: subagents([archived.id]) as never }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["multiagent.subagents.predefined_agents[0]", "archived"] },
    );
    expect((await client.beta.agents.retrieve(plain.id)).version).toBe(1);
  });

  it("a session shows its agent's roster whole, each agent as pinned when the session was created", async () => {
    const researcher = await client.beta.agents.create({
      name: "roster researcher",
      model: MODEL,
      system: "dig",
    });
    const lead = await agent("roster lead", {
      type: "multiagent_20261001",
      subagents: { type: "enabled", predefined_agents: [researcher.id, { type: "self" }] },
      workflows: { type: "disabled" },
    });
    // An agent with a roster needs its sandbox before the first tool call (sandbox admission).
    const environment = await client.beta.environments.create({
      name: "roster",
      config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
    });
    const session = await client.beta.sessions.create({ agent: lead.id, environment_id: environment.id });
    // Changed after the session started: the session keeps the version it pinned.
    await client.beta.agents.update(researcher.id, { system: "dig deeper" });
    const whole = (a: Anthropic.Beta.Agents.BetaManagedAgentsAgent) => ({
      id: a.id,
      type: "agent",
      version: a.version,
      name: a.name,
      description: a.description,
      system: a.system,
      model: a.model,
      tools: a.tools,
      mcp_servers: a.mcp_servers,
      skills: a.skills,
      execution_identity: a.execution_identity,
    });
    const expected = {
      type: "multiagent_20261001",
      advisor: { type: "disabled" },
      subagents: {
        type: "enabled",
        inline_agents: { type: "enabled" },
        predefined_agents: [whole(researcher), whole(lead)],
      },
      workflows: { type: "disabled" },
    };
    expect(session.agent.multiagent).toEqual(expected);
    expect((await client.beta.sessions.retrieve(session.id)).agent.multiagent).toEqual(expected);
    const listed = (await all(client.beta.sessions.list())).find((s) => s.id === session.id);
    expect(listed?.agent.multiagent).toEqual(expected);
    // The agent itself still shows references.
    expect((await client.beta.agents.retrieve(lead.id)).multiagent).toMatchObject({
      subagents: { predefined_agents: [ref(researcher), ref(lead)] },
    });
  });
});
