/**
 * Cron deployments fire each instant exactly once: two `awaken up` replicas on one PostgreSQL
 * database, one of them killed with SIGKILL just before an instant, and a restart after missed
 * instants (the latest missed one fires, older ones are skipped). The replicas' scheduler clock
 * runs 20 times faster than real time (AWAKEN_TEST_SCHEDULER_CLOCK, test only) so a one-minute
 * cron instant passes every 3 real seconds; every assertion is on the run records, never on timing.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import type { BetaManagedAgentsDeploymentRun } from "@anthropic-ai/sdk/resources/beta/deployment-runs";
import { afterEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { all, MODEL, sleep } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const KEY = "sk-awaken-schedules-test";
const RATE = 20;
const MINUTE = 60_000;
/** Sim time starts 30 s into a minute, so the first instant comes 1.5 real seconds after the origin. */
const CLOCK_ORIGIN = Date.UTC(2030, 0, 1, 0, 0, 30);

const running: ServerProcess[] = [];
const dirs: string[] = [];
let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await schema?.drop();
  schema = undefined;
});

/** Real time and the replicas' scheduler time, as AWAKEN_TEST_SCHEDULER_CLOCK defines it. */
function testClock() {
  const realOrigin = Date.now();
  return {
    env: `${realOrigin}:${CLOCK_ORIGIN}:${RATE}`,
    now: () => CLOCK_ORIGIN + (Date.now() - realOrigin) * RATE,
  };
}

async function replica(
  clockEnv: string,
  options: { dataDir?: string; databaseUrl?: string; env?: Record<string, string> } = {},
) {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "awaken-schedules-"));
  if (!options.dataDir) dirs.push(dataDir);
  const p = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: {
      AWAKEN_MASTER_KEY: MASTER_KEY,
      AWAKEN_TEST_SCHEDULER_CLOCK: clockEnv,
      AWAKEN_SCHEDULER_JITTER_MS: "0",
      AWAKEN_SCHEDULER_TICK_MS: "50",
      // A claim a killed replica left unsettled is settled by another after 3 real seconds.
      AWAKEN_SCHEDULER_STALE_CLAIM_MS: String(MINUTE),
      ...(options.databaseUrl ? { AWAKEN_DATABASE_URL: options.databaseUrl } : {}),
      ...options.env,
    },
    args: ["--workers", "0"],
  });
  running.push(p);
  return p;
}
const MASTER_KEY = randomBytes(32).toString("base64");

async function everyMinute(client: Anthropic, on?: { agentId: string; environmentId: string }) {
  const agent = on?.agentId ?? (await client.beta.agents.create({ name: "Ticker", model: MODEL })).id;
  const environment = on?.environmentId ?? (await client.beta.environments.create({ name: "ticks" })).id;
  return client.beta.deployments.create({
    agent,
    environment_id: environment,
    initial_events: [{ type: "user.message", content: [{ type: "text", text: "tick" }] }],
    name: "every minute",
    schedule: { type: "cron", expression: "* * * * *", timezone: "UTC" },
  });
}

const scheduledAt = (run: BetaManagedAgentsDeploymentRun) =>
  run.trigger_context.type === "schedule" ? Date.parse(run.trigger_context.scheduled_at) : Number.NaN;

/** The deployment's scheduled runs, oldest instant first, once `enough` says so (bounded wait). */
async function scheduledRuns(
  client: Anthropic,
  deploymentId: string,
  enough: (runs: BetaManagedAgentsDeploymentRun[]) => boolean,
): Promise<BetaManagedAgentsDeploymentRun[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const runs = (
      await all(client.beta.deploymentRuns.list({ deployment_id: deploymentId, trigger_type: "schedule" }))
    )
      .slice()
      .sort((a, b) => scheduledAt(a) - scheduledAt(b));
    if (enough(runs)) return runs;
    if (Date.now() > deadline) throw new Error(`runs never satisfied the test: ${JSON.stringify(runs)}`);
    await sleep(100);
  }
}

/** Every instant once: no instant twice, none skipped between the first and the last, each with a session. */
function expectEachInstantOnce(runs: BetaManagedAgentsDeploymentRun[]) {
  const instants = runs.map(scheduledAt);
  expect(new Set(instants).size).toBe(instants.length);
  for (let i = 1; i < instants.length; i++) expect(instants[i]! - instants[i - 1]!).toBe(MINUTE);
  for (const at of instants) expect(at % MINUTE).toBe(0);
  for (const run of runs)
    expect(run).toMatchObject({ error: null, session_id: expect.stringMatching(/^sesn_/) });
  expect(new Set(runs.map((r) => r.session_id)).size).toBe(runs.length);
}

describe("scheduled deployments", () => {
  it("two replicas on one PostgreSQL database fire each instant once, also across a SIGKILL", async (ctx) => {
    const reason = postgresUnavailable();
    if (reason) ctx.skip(reason);
    schema = await emptySchema();
    const clock = testClock();
    const a = await replica(clock.env, { databaseUrl: schema.url });
    const b = await replica(clock.env, { databaseUrl: schema.url });
    const deployment = await everyMinute(a.client);

    const before = await scheduledRuns(b.client, deployment.id, (runs) => runs.length >= 3);
    expectEachInstantOnce(before);

    // Kill A a few simulated seconds before an instant: B alone fires it and the ones after.
    while (clock.now() % MINUTE < MINUTE - 10_000) await sleep(20);
    a.child.kill("SIGKILL");
    await a.exited;
    const killedAt = clock.now();
    const after = await scheduledRuns(
      b.client,
      deployment.id,
      (runs) => runs.filter((r) => scheduledAt(r) > killedAt).length >= 3,
    );
    expectEachInstantOnce(after);
    expect(after.length).toBeGreaterThanOrEqual(before.length + 3);

    const shown = await b.client.beta.deployments.retrieve(deployment.id);
    expect(shown.schedule?.last_run_at).not.toBeNull();
    // Upcoming instants are whole minutes after the last one fired.
    const upcoming = (shown.schedule?.upcoming_runs_at ?? []).map((at) => Date.parse(at));
    expect(upcoming).toHaveLength(5);
    expect(upcoming[0]!).toBeGreaterThan(scheduledAt(after.at(-1)!));
  });

  it("after a restart the latest missed instant fires once and older ones are skipped", async () => {
    const clock = testClock();
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-schedules-"));
    dirs.push(dataDir);
    const first = await replica(clock.env, { dataDir });
    const deployment = await everyMinute(first.client);
    const [fired] = await scheduledRuns(first.client, deployment.id, (runs) => runs.length >= 1);
    first.child.kill("SIGKILL");
    await first.exited;

    // Down for at least three instants.
    const downAt = clock.now();
    while (clock.now() < downAt + 3 * MINUTE + 5_000) await sleep(50);
    const restartFrom = clock.now();
    const second = await replica(clock.env, { dataDir });
    const runs = await scheduledRuns(second.client, deployment.id, (rs) =>
      rs.some((r) => scheduledAt(r) > downAt),
    );
    // The first run after the restart is the latest instant due then, not the first one missed:
    // the three or more instants between were skipped, not replayed.
    const caughtUp = runs.find((r) => scheduledAt(r) > downAt)!;
    expect(scheduledAt(caughtUp)).toBeGreaterThanOrEqual(Math.floor(restartFrom / MINUTE) * MINUTE);
    const lastBefore = runs.filter((r) => scheduledAt(r) <= downAt).at(-1)!;
    expect(scheduledAt(lastBefore)).toBeGreaterThanOrEqual(scheduledAt(fired!));
    expect(scheduledAt(caughtUp) - scheduledAt(lastBefore)).toBeGreaterThanOrEqual(3 * MINUTE);
    expect(caughtUp).toMatchObject({ error: null, session_id: expect.stringMatching(/^sesn_/) });
    // And it goes on: the next instant fires once.
    const later = await scheduledRuns(second.client, deployment.id, (rs) =>
      rs.some((r) => scheduledAt(r) === scheduledAt(caughtUp) + MINUTE),
    );
    expectEachInstantOnce(later.filter((r) => scheduledAt(r) >= scheduledAt(caughtUp)));
  });

  it("past the per-minute cap an instant records a rate-limited run; a recurring error pauses the schedule", async () => {
    const clock = testClock();
    const server = await replica(clock.env, { env: { AWAKEN_SCHEDULER_TRIGGERS_PER_MINUTE: "1" } });
    const client = server.client;
    const agent = await client.beta.agents.create({ name: "Capped", model: MODEL });
    const environment = await client.beta.environments.create({ name: "capped" });
    const on = { agentId: agent.id, environmentId: environment.id };
    const one = await everyMinute(client, on);
    const two = await everyMinute(client, on);
    // Each instant: one of the two opens a session, the other is refused by the cap, and both record it.
    const byInstant = async () => {
      const runs = await all(client.beta.deploymentRuns.list({ trigger_type: "schedule" }));
      const instants = new Map<number, BetaManagedAgentsDeploymentRun[]>();
      for (const run of runs)
        instants.set(scheduledAt(run), [...(instants.get(scheduledAt(run)) ?? []), run]);
      return [...instants.values()].filter((group) => group.length === 2);
    };
    const deadline = Date.now() + 60_000;
    let complete = await byInstant();
    while (complete.length < 2 && Date.now() < deadline) {
      await sleep(100);
      complete = await byInstant();
    }
    expect(complete.length).toBeGreaterThanOrEqual(2);
    for (const group of complete) {
      expect(group.filter((r) => r.session_id !== null)).toHaveLength(1);
      expect(group.filter((r) => r.error?.type === "session_rate_limited_error")).toHaveLength(1);
      expect(new Set(group.map((r) => r.deployment_id))).toEqual(new Set([one.id, two.id]));
    }
    // The cap does not pause a schedule.
    expect((await client.beta.deployments.retrieve(one.id)).status).toBe("active");

    // An archived agent fails every fire: the first failed fire pauses the deployment with its error.
    await client.beta.deployments.archive(two.id);
    await client.beta.agents.archive(agent.id);
    const [failed] = await scheduledRuns(client, one.id, (runs) =>
      runs.some((r) => r.error?.type === "agent_archived_error"),
    ).then((runs) => runs.filter((r) => r.error?.type === "agent_archived_error"));
    expect(failed).toMatchObject({ session_id: null, error: { message: expect.stringContaining(agent.id) } });
    const paused = await client.beta.deployments.retrieve(one.id);
    expect(paused).toMatchObject({
      status: "paused",
      paused_reason: { type: "error", error: { type: "agent_archived_error" } },
    });
  });
});
