import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, startRemoteWorker } from "../../src/cli/worker.js";
import { WORKER_ROUTE_PREFIX } from "../../src/worker/transportWire.js";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import { eventually, helpOf, type Sample, scrapeMetrics, total } from "../support/metricsScrape.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { createSession, isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const TOKEN = "metrics-worker-token-0123456789abcdef";

/** Every family the server defines besides HTTP, model, tool, commit, settle and stream counts. */
const FAMILIES = [
  "awaken_runs",
  "awaken_run_claims_total",
  "awaken_run_claim_wait_seconds",
  "awaken_fence_rejections_total",
  "awaken_crash_budget_exhausted_total",
  "awaken_sandbox_realizations_total",
  "awaken_sandbox_first_tool_seconds",
  "awaken_credential_opens_total",
  "awaken_remote_workers",
];
const POOL_FAMILIES = [
  "awaken_db_pool_connections",
  "awaken_db_pool_max_connections",
  "awaken_db_pool_waiting_queries",
];

function expectHelp(text: string, names: string[]): void {
  for (const name of names) {
    const help = helpOf(text, name);
    expect(help, name).not.toBeNull();
    expect(help!.length, name).toBeGreaterThan(40);
  }
}

const runStates = (samples: Sample[]) =>
  Object.fromEntries(
    ["queued", "delayed", "claimed", "lapsed"].map((state) => [
      state,
      total(samples, "awaken_runs", { state }),
    ]),
  );

describe("metric families after a scripted run (SQLite)", () => {
  let t: TestServer;
  let mcp: BearerMcpServer;
  beforeAll(async () => {
    // Tier "none" lets bash run without a sandbox binary; the loopback MCP server takes the probe.
    t = await startTestServer({
      workerPollMs: 50,
      allowWeakerTiers: true,
      allowPrivateHosts: LOOPBACK,
      workerToken: TOKEN,
    });
    mcp = await startBearerMcpServer();
  });
  afterAll(async () => {
    await t.close();
    await mcp.close();
  });

  it("counts claims and their wait, sandbox realizations, credential opens, the run queue and remote workers", async () => {
    const scrape = () => scrapeMetrics(t.server.url);
    const before = (await scrape()).samples;

    // A sandboxed tool: the session's first sandbox realization, then the tool in it.
    const agent = await t.client.beta.agents.create({
      name: "hands",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }] as never,
    });
    const environment = await t.client.beta.environments.create({
      name: "hands",
      config: { type: "cloud", sandbox: { tier: "none" } } as never,
    });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await t.client.beta.sessions.events.send(session.id, {
      events: [userMessage('call bash {"command":"echo hi"}')],
    });
    await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle), 15_000);

    // A credential open: the validation probe opens the credential for the MCP server, audited.
    const token = "metrics-probe-bearer-token";
    mcp.accepted.add(token);
    const vault = await t.client.beta.vaults.create({ display_name: "metrics" });
    const credential = await t.client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token, mcp_server_url: mcp.url },
    });
    const validation = await t.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, {
      vault_id: vault.id,
    });
    expect(validation.status).toBe("valid");

    // A remote worker polls once (nothing to claim): it counts as connected, by number only.
    const owner = "metrics-remote.0a1b2c3d/0";
    const poll = await fetch(`${t.server.url}${WORKER_ROUTE_PREFIX}/claim`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ owner, waitMs: 0 }),
    });
    expect(await poll.json()).toMatchObject({ activation: null });

    const { text, samples } = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) =>
      total(samples, name, labels) - total(before, name, labels);
    expectHelp(text, FAMILIES);

    const local = { via: "local", kind: "queued" };
    expect(moved("awaken_run_claims_total", local)).toBeGreaterThanOrEqual(1);
    expect(moved("awaken_run_claims_total", { via: "remote" })).toBe(0);
    expect(moved("awaken_run_claim_wait_seconds_count", local)).toBe(moved("awaken_run_claims_total", local));
    expect(moved("awaken_sandbox_realizations_total", { tier: "none", outcome: "ok" })).toBe(1);
    expect(moved("awaken_sandbox_realizations_total")).toBe(1);
    expect(moved("awaken_sandbox_first_tool_seconds_count", { tier: "none" })).toBe(1);
    expect(moved("awaken_credential_opens_total", { holder: "validation_probe", outcome: "opened" })).toBe(1);
    expect(total(samples, "awaken_remote_workers")).toBe(1);
    // The turn ended: nothing waits or is held, and every state is reported (as zero).
    expect(runStates(samples)).toEqual({ queued: 0, delayed: 0, claimed: 0, lapsed: 0 });
    expect(samples.filter((s) => s.name === "awaken_runs")).toHaveLength(4);
    // Nothing was refused or crashed in this run; the unlabelled counter still shows its zero.
    expect(moved("awaken_fence_rejections_total")).toBe(0);
    expect(total(samples, "awaken_crash_budget_exhausted_total")).toBe(0);
    expect(samples.some((s) => s.name === "awaken_crash_budget_exhausted_total")).toBe(true);
    // SQLite has no connection pool: no pool gauges rather than made-up ones.
    for (const name of POOL_FAMILIES) expect(helpOf(text, name), name).toBeNull();

    // No id, token or owner reaches a label.
    for (const secret of [
      session.id,
      credential.id,
      vault.id,
      token,
      owner,
      "metrics-remote",
      TEST_API_KEY,
      TOKEN,
    ])
      expect(text).not.toContain(secret);
  });
});

describe.skipIf(postgresUnavailable() !== null)(
  "metric families on PostgreSQL: queue depth, remote claims, the pool",
  () => {
    let schema: Awaited<ReturnType<typeof emptySchema>>;
    let t: TestServer;
    let worker: RunningWorker | null = null;
    const workspaceDir = mkdtempSync(join(tmpdir(), "awaken-metrics-worker-"));
    beforeAll(async () => {
      schema = await emptySchema();
      // No in-process worker: a run stays queued until the remote worker below claims it.
      t = await startTestServer({ databaseUrl: schema.url, workers: 0, workerToken: TOKEN });
    });
    afterAll(async () => {
      await worker?.stop();
      await t?.close();
      await schema?.drop();
      rmSync(workspaceDir, { recursive: true, force: true });
    });

    it("reports the queued run from the database, the pool's use, and the remote claim with its wait", async () => {
      const scrape = () => scrapeMetrics(t.server.url);
      const before = (await scrape()).samples;
      const { session } = await createSession(t.client);
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
      await eventually(async () => {
        expect(runStates((await scrape()).samples)).toEqual({ queued: 1, delayed: 0, claimed: 0, lapsed: 0 });
      });
      const queued = await scrape();
      expectHelp(queued.text, [...FAMILIES, ...POOL_FAMILIES]);
      expect(total(queued.samples, "awaken_db_pool_max_connections")).toBe(20);
      const connections = total(queued.samples, "awaken_db_pool_connections");
      expect(connections).toBeGreaterThan(0);
      expect(connections).toBeLessThanOrEqual(20);
      // Read at the scrape, while the scrape's own queue-depth query holds (or waits for) a connection.
      const pool = queued.samples.filter((x) => x.name.startsWith("awaken_db_pool_"));
      expect(pool.map((x) => [x.name, x.labels.state ?? null]).sort()).toEqual([
        ["awaken_db_pool_connections", "busy"],
        ["awaken_db_pool_connections", "idle"],
        ["awaken_db_pool_max_connections", null],
        ["awaken_db_pool_waiting_queries", null],
      ]);
      expect(total(queued.samples, "awaken_remote_workers")).toBe(0);

      worker = await startRemoteWorker(
        {
          coordinatorUrl: t.server.url,
          databaseUrl: undefined,
          concurrency: 1,
          id: "metrics-remote",
          modelIdleTimeoutMs: 60_000,
          modelRetryBaseMs: 10,
          workspaceDir,
          env: { AWAKEN_WORKER_TOKEN: TOKEN },
          metrics: { host: "127.0.0.1", port: 0 },
        },
        pino({ level: "silent" }),
        () => false,
      );
      await waitForHistory(t.client, session.id, (h) => h.some(isEndTurnIdle), 15_000);

      const { text, samples } = await scrape();
      const moved = (name: string, labels: Record<string, string> = {}) =>
        total(samples, name, labels) - total(before, name, labels);
      const remote = { via: "remote", kind: "queued" };
      expect(moved("awaken_run_claims_total", remote)).toBeGreaterThanOrEqual(1);
      expect(moved("awaken_run_claims_total", { via: "local" })).toBe(0);
      expect(moved("awaken_run_claim_wait_seconds_count", remote)).toBe(
        moved("awaken_run_claims_total", remote),
      );
      // The run waited at least through the scrapes above before any worker existed.
      expect(moved("awaken_run_claim_wait_seconds_sum", remote)).toBeGreaterThan(0);
      expect(total(samples, "awaken_remote_workers")).toBe(1);
      expect(runStates(samples)).toEqual({ queued: 0, delayed: 0, claimed: 0, lapsed: 0 });
      expect(text).not.toContain("metrics-remote");

      // What ran in the worker is counted by the worker's own registry, not the coordinator's.
      expect(worker?.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const own = await scrapeMetrics(worker!.metricsUrl!.replace(/\/metrics$/, ""));
      expect(
        total(own.samples, "awaken_model_requests_total", { provider: "offline", outcome: "ok" }),
      ).toBeGreaterThanOrEqual(1);
      expect(total(own.samples, "awaken_commits_total", { outcome: "ok" })).toBeGreaterThanOrEqual(1);
      expect(total(own.samples, "awaken_runs_settled_total")).toBeGreaterThanOrEqual(1);
      expect(own.samples.some((x) => x.name === "process_cpu_seconds_total")).toBe(true);
      expect(moved("awaken_model_requests_total")).toBe(0);
      // The claims stay the coordinator's to count: no process counts one twice.
      expect(total(own.samples, "awaken_run_claims_total")).toBe(0);
      for (const secret of [session.id, TOKEN, "metrics-remote"]) expect(own.text).not.toContain(secret);
    });
  },
);
