/**
 * Deployments and deployment runs through the official SDK over real HTTP, on SQLite and on
 * PostgreSQL: all ten operations (create, retrieve, update, list, archive, pause, unpause, run;
 * runs retrieve and list), the filters, a manual run that opens an ordinary session with the
 * initial events, a run that cannot open one (agent archived) recorded as a failed run, the admin
 * audit's entries, and clear 400s for every bad input with nothing written.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { BetaManagedAgentsDeployment } from "@anthropic-ai/sdk/resources/beta/deployments";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  all,
  BAD_REQUEST,
  expectApiError,
  history,
  MODEL,
  NOT_FOUND,
  RFC3339,
  textOf,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;
const HELLO = [
  { type: "user.message" as const, content: [{ type: "text" as const, text: "compile the report" }] },
];

describe.each(BACKENDS)("deployments over the SDK on %s", (backend) => {
  let t: TestServer | undefined;
  let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
  let client: Anthropic;
  let agentId: string;
  let environmentId: string;
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;

  beforeAll(async () => {
    if (unavailable) return;
    if (backend === "PostgreSQL") schema = await emptySchema();
    t = await startTestServer(schema ? { databaseUrl: schema.url } : {});
    client = t.client;
    agentId = (await client.beta.agents.create({ name: "Reporter", model: MODEL })).id;
    environmentId = (await client.beta.environments.create({ name: "deployments" })).id;
  });
  afterAll(async () => {
    await t?.close();
    await schema?.drop();
  });
  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });

  const create = (extra: Partial<Parameters<Anthropic["beta"]["deployments"]["create"]>[0]> = {}) =>
    client.beta.deployments.create({
      agent: agentId,
      environment_id: environmentId,
      initial_events: HELLO,
      name: "Daily order report",
      ...extra,
    });

  it("create, retrieve, update, list, pause, unpause and archive a deployment", async () => {
    const d: BetaManagedAgentsDeployment = await create({
      description: "orders",
      metadata: { team: "ops" },
      schedule: { type: "cron", expression: "0 9 * * 1-5", timezone: "America/Los_Angeles" },
    });
    expect(d).toMatchObject({
      type: "deployment",
      name: "Daily order report",
      description: "orders",
      // A bare agent id pins the latest version.
      agent: { type: "agent", id: agentId, version: 1 },
      environment_id: environmentId,
      initial_events: HELLO,
      resources: [],
      vault_ids: [],
      metadata: { team: "ops" },
      status: "active",
      paused_reason: null,
      archived_at: null,
      schedule: {
        type: "cron",
        expression: "0 9 * * 1-5",
        timezone: "America/Los_Angeles",
        last_run_at: null,
      },
    });
    expect(d.id).toMatch(/^depl_/);
    expect(d.created_at).toMatch(RFC3339);
    const upcoming = d.schedule?.upcoming_runs_at ?? [];
    expect(upcoming).toHaveLength(5);
    // 09:00 in Los Angeles is 16:00 or 17:00 UTC, on weekdays only.
    for (const at of upcoming) {
      const date = new Date(at);
      expect([16, 17]).toContain(date.getUTCHours());
      expect(date.getUTCMinutes()).toBe(0);
      expect([0, 6]).not.toContain(date.getUTCDay());
    }
    expect(await client.beta.deployments.retrieve(d.id)).toEqual(d);

    const v2 = await client.beta.agents.update(agentId, { version: 1, description: "v2" });
    const updated = await client.beta.deployments.update(d.id, {
      name: "Weekly report",
      agent: agentId,
      metadata: { team: null, owner: "me" },
      schedule: { type: "cron", expression: "30 8 * * 0", timezone: "UTC" },
      description: null,
    });
    expect(updated).toMatchObject({
      name: "Weekly report",
      description: null,
      agent: { id: agentId, version: v2.version },
      metadata: { owner: "me" },
      schedule: { expression: "30 8 * * 0", timezone: "UTC" },
    });
    for (const at of updated.schedule?.upcoming_runs_at ?? []) expect(at).toMatch(/T08:30:00(\.000)?Z$/);

    const paused = await client.beta.deployments.pause(d.id);
    expect(paused).toMatchObject({ status: "paused", paused_reason: { type: "manual" } });
    // Paused: upcoming instants still show what the schedule would do.
    expect(paused.schedule?.upcoming_runs_at).toHaveLength(5);
    expect(idsOf(await all(client.beta.deployments.list({ status: "paused" })))).toContain(d.id);
    expect(idsOf(await all(client.beta.deployments.list({ status: "active" })))).not.toContain(d.id);
    const unpaused = await client.beta.deployments.unpause(d.id);
    expect(unpaused).toMatchObject({ status: "active", paused_reason: null });

    const other = await create({ name: "manual only" });
    expect(other.schedule).toBeNull();
    expect(idsOf(await all(client.beta.deployments.list({ agent_id: agentId })))).toEqual(
      expect.arrayContaining([d.id, other.id]),
    );
    expect(await all(client.beta.deployments.list({ agent_id: "agent_missing" }))).toEqual([]);

    const archived = await client.beta.deployments.archive(d.id);
    expect(archived).toMatchObject({ status: "active", archived_at: expect.stringMatching(RFC3339) });
    expect(archived.schedule?.upcoming_runs_at).toEqual([]);
    expect(idsOf(await all(client.beta.deployments.list()))).not.toContain(d.id);
    expect(idsOf(await all(client.beta.deployments.list({ include_archived: true })))).toContain(d.id);
    await expectApiError(client.beta.deployments.pause(d.id), Anthropic.BadRequestError, {
      ...BAD_REQUEST,
      message: ["archived"],
    });

    // Pagination: one per page, newest first, every deployment once.
    const pages = idsOf(await all(client.beta.deployments.list({ include_archived: true, limit: 1 })));
    expect(new Set(pages).size).toBe(pages.length);
    expect(pages.slice(0, 2)).toEqual([other.id, d.id]);
  });

  it("run now opens an ordinary session with the initial events and records the run", async () => {
    const d = await create({ name: "run me" });
    const paused = await client.beta.deployments.pause(d.id);
    expect(paused.status).toBe("paused");
    // Manual runs are permitted while paused (SDK).
    const run = await client.beta.deployments.run(d.id);
    expect(run).toMatchObject({
      type: "deployment_run",
      deployment_id: d.id,
      agent: { type: "agent", id: agentId, version: d.agent.version },
      error: null,
      trigger_context: { type: "manual" },
    });
    expect(run.id).toMatch(/^drun_/);
    expect(run.session_id).toMatch(/^sesn_/);
    const session = await client.beta.sessions.retrieve(run.session_id!);
    expect(session.agent).toMatchObject({ id: agentId, version: d.agent.version });
    expect(session.environment_id).toBe(environmentId);
    const events = await history(client, session.id);
    expect(textOf(events.find((e) => e.type === "user.message"))).toBe("compile the report");

    expect(await client.beta.deploymentRuns.retrieve(run.id)).toEqual(run);
    // Manual runs do not move the schedule's last_run_at.
    expect((await client.beta.deployments.retrieve(d.id)).schedule).toBeNull();

    // A run that cannot open its session is a failed run, not a lost trigger.
    const lonely = await client.beta.agents.create({ name: "Soon archived", model: MODEL });
    const doomed = await create({ name: "doomed", agent: { type: "agent", id: lonely.id, version: 1 } });
    await client.beta.agents.archive(lonely.id);
    const failed = await client.beta.deployments.run(doomed.id);
    expect(failed).toMatchObject({
      session_id: null,
      error: { type: "agent_archived_error", message: expect.stringContaining(lonely.id) },
      trigger_context: { type: "manual" },
    });

    const runs = await all(client.beta.deploymentRuns.list());
    expect(idsOf(runs)).toEqual(expect.arrayContaining([run.id, failed.id]));
    expect(idsOf(await all(client.beta.deploymentRuns.list({ deployment_id: d.id })))).toEqual([run.id]);
    expect(idsOf(await all(client.beta.deploymentRuns.list({ has_error: true })))).toEqual([failed.id]);
    expect(idsOf(await all(client.beta.deploymentRuns.list({ has_error: false })))).not.toContain(failed.id);
    expect(await all(client.beta.deploymentRuns.list({ trigger_type: "schedule" }))).toEqual([]);
    expect(await all(client.beta.deploymentRuns.list({ deployment_id: "depl_missing" }))).toEqual([]);
    expect(
      await all(
        client.beta.deploymentRuns.list({ "created_at[gt]": new Date(Date.now() + 60_000).toISOString() }),
      ),
    ).toEqual([]);
    await expectApiError(
      client.beta.deploymentRuns.retrieve("drun_missing"),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
  });

  it("refuses bad input with a clear 400 or 404 and writes nothing", async () => {
    const before = await all(client.beta.deployments.list({ include_archived: true }));
    const bad = async (params: Record<string, unknown>, message: Array<string | RegExp>) =>
      expectApiError(
        client.beta.deployments.create({
          agent: agentId,
          environment_id: environmentId,
          initial_events: HELLO,
          name: "bad",
          ...params,
        } as never),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message },
      );
    const cron = (expression: string, timezone = "UTC") => ({
      schedule: { type: "cron", expression, timezone },
    });
    await bad(cron("* * * * * *"), ["5 POSIX cron fields"]);
    await bad(cron("@daily"), ["5 POSIX cron fields"]);
    await bad(cron("0 0 L * *"), ["day-of-month", "not POSIX"]);
    await bad(cron("0 0 * * 1#2"), ["day-of-week"]);
    await bad(cron("0 0 ? * *"), ["day-of-month"]);
    await bad(cron("61 * * * *"), ["minute"]);
    await bad(cron("0 0 31 2 *"), ["never matches"]);
    await bad(cron("0 9 * * *", "Mars/Olympus_Mons"), ["IANA time zone"]);
    await bad(cron("0 9 * * *", "+01:00"), ["IANA time zone"]);
    await bad({ schedule: { type: "cron", expression: "0 9 * * *" } }, ["timezone"]);
    await bad({ initial_events: [] }, ["initial_events"]);
    await bad({ initial_events: Array.from({ length: 51 }, () => HELLO[0]) }, ["initial_events"]);
    await bad({ initial_events: [{ type: "user.interrupt" }] }, ["initial event type"]);
    await bad(
      { initial_events: [{ type: "system.message", content: [{ type: "text", text: "x" }] }, HELLO[0]] },
      ["system.message"],
    );
    await bad({ name: "" }, ["name"]);
    await bad({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, [
      "metadata",
    ]);
    await bad(
      {
        resources: [
          {
            type: "github_repository",
            url: "https://github.com/o/r",
            authorization_token: "ghp_secret_value",
          },
        ],
      },
      ["authorization_token"],
    );
    await bad({ vault_ids: Array.from({ length: 51 }, (_, i) => `vlt_${i}`) }, ["vault_ids"]);
    await bad({ surprise: true }, ["surprise"]);
    await expectApiError(
      client.beta.deployments.create({
        agent: "agent_missing",
        environment_id: environmentId,
        initial_events: HELLO,
        name: "x",
      }),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(
      client.beta.deployments.create({
        agent: agentId,
        environment_id: "env_missing",
        initial_events: HELLO,
        name: "x",
      }),
      Anthropic.NotFoundError,
      { status: 404, type: "not_found_error", message: ["env_missing"] },
    );
    await expectApiError(
      client.beta.deployments.list({ status: "active", include_archived: true }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.beta.deploymentRuns.list({ trigger_type: "cron" as never }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    await expectApiError(
      client.beta.deployments.retrieve("depl_missing"),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    await expectApiError(client.beta.deployments.run("depl_missing"), Anthropic.NotFoundError, NOT_FOUND);
    const d = await create({
      name: "kept",
      schedule: { type: "cron", expression: "0 9 * * *", timezone: "UTC" },
    });
    await expectApiError(
      client.beta.deployments.update(d.id, {
        schedule: { type: "cron", expression: "0 9 * *", timezone: "UTC" },
      }),
      Anthropic.BadRequestError,
      BAD_REQUEST,
    );
    expect(await client.beta.deployments.retrieve(d.id)).toEqual(d);
    const after = await all(client.beta.deployments.list({ include_archived: true }));
    expect(idsOf(after)).toEqual([d.id, ...idsOf(before)]);
  });

  it("records each change in the admin audit", async () => {
    const d = await create({ name: "audited" });
    await client.beta.deployments.pause(d.id);
    await client.beta.deployments.archive(d.id);
    const response = await fetch(
      `${t!.server.url}/v1/awaken/audit?resource_type=deployment&resource_id=${d.id}`,
      {
        headers: { "x-api-key": TEST_API_KEY },
      },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: Array<{ action: string; resource_id: string }> };
    expect(body.data.map((e) => e.action)).toEqual(["archive", "update", "create"]);
  });
});

const idsOf = (items: ReadonlyArray<{ id: string }>) => items.map((i) => i.id);

describe("a deployment run past a workspace quota", () => {
  let t: TestServer | undefined;
  afterAll(async () => {
    await t?.close();
  });

  it("is a failed run with session_rate_limited_error, not a lost trigger", async () => {
    t = await startTestServer({ quotas: { default: { sessionsPerHour: 1 }, workspaces: {} } });
    const client = t.client;
    const agent = await client.beta.agents.create({ name: "Quota", model: MODEL });
    const environment = await client.beta.environments.create({ name: "quota" });
    const d = await client.beta.deployments.create({
      agent: agent.id,
      environment_id: environment.id,
      initial_events: HELLO,
      name: "quota",
    });
    const first = await client.beta.deployments.run(d.id);
    expect(first.session_id).toMatch(/^sesn_/);
    const second = await client.beta.deployments.run(d.id);
    expect(second).toMatchObject({
      session_id: null,
      error: { type: "session_rate_limited_error", message: expect.stringMatching(/session/i) },
    });
    expect(idsOf(await all(client.beta.deploymentRuns.list({ deployment_id: d.id })))).toEqual([
      second.id,
      first.id,
    ]);
    // A manual run's failure never pauses the deployment.
    expect((await client.beta.deployments.retrieve(d.id)).status).toBe("active");
  });
});

describe("who reaches a deployment and its sessions", () => {
  let t: TestServer | undefined;
  afterAll(async () => {
    await t?.close();
  });

  async function mintKey(body: Record<string, unknown>): Promise<Anthropic> {
    const response = await fetch(`${t!.server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const { key } = (await response.json()) as { key: string };
    return new Anthropic({ baseURL: t!.server.url, apiKey: key, maxRetries: 0 });
  }

  it("a run's session names its deployment; sessions filter by it; an allow-list reads its agents' runs only", async () => {
    t = await startTestServer();
    const client = t.client;
    const allowed = await client.beta.agents.create({ name: "allowed", model: MODEL });
    const other = await client.beta.agents.create({ name: "other", model: MODEL });
    const environment = await client.beta.environments.create({ name: "reach" });
    const make = (agent: string, name: string) =>
      client.beta.deployments.create({ agent, environment_id: environment.id, initial_events: HELLO, name });
    const mine = await make(allowed.id, "mine");
    const theirs = await make(other.id, "theirs");
    const run = await client.beta.deployments.run(mine.id);
    const otherRun = await client.beta.deployments.run(theirs.id);
    const direct = await client.beta.sessions.create({ agent: allowed.id, environment_id: environment.id });

    // SDK session `deployment_id`: set when a deployment's run opened it, null otherwise.
    expect((await client.beta.sessions.retrieve(run.session_id!)).deployment_id).toBe(mine.id);
    expect((await client.beta.sessions.retrieve(direct.id)).deployment_id).toBeNull();
    expect(idsOf(await all(client.beta.sessions.list({ deployment_id: mine.id })))).toEqual([run.session_id]);
    expect(await all(client.beta.sessions.list({ deployment_id: "depl_missing" }))).toEqual([]);

    // A runtime key confined to one agent reads that agent's runs only; the other's are absent.
    const limited = await mintKey({ role: "runtime", agent_ids: [allowed.id], label: "limited" });
    expect(idsOf(await all(limited.beta.deploymentRuns.list()))).toEqual([run.id]);
    expect((await limited.beta.deploymentRuns.retrieve(run.id)).id).toBe(run.id);
    await expectApiError(
      limited.beta.deploymentRuns.retrieve(otherRun.id),
      Anthropic.NotFoundError,
      NOT_FOUND,
    );
    // Runtime keys read runs; authoring deployments (and running them) is a builder's.
    const forbidden = { status: 403, type: "permission_error" };
    await expectApiError(limited.beta.deployments.list(), Anthropic.PermissionDeniedError, forbidden);
    await expectApiError(limited.beta.deployments.run(mine.id), Anthropic.PermissionDeniedError, forbidden);
    const runtime = await mintKey({ role: "runtime", label: "runtime" });
    expect(idsOf(await all(runtime.beta.deploymentRuns.list()))).toEqual(
      expect.arrayContaining([run.id, otherRun.id]),
    );
    const builder = await mintKey({ role: "builder", label: "builder" });
    expect((await builder.beta.deployments.retrieve(theirs.id)).id).toBe(theirs.id);
  });
});
