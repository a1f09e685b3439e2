/**
 * The scheduler against the real deployment store on SQLite and PostgreSQL, with the kernel clock
 * driven by hand: replicas sharing one store fire each instant once however their passes
 * interleave, and a claim whose replica stopped after opening the session is settled by another
 * replica with that same session (the run's key names it), never a second one.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ExecutableAgentSnapshot, SessionRecord } from "../../src/coordinator/ports.js";
import type { SessionEntry } from "../../src/coordinator/sessionEntry.js";
import { DeploymentScheduler } from "../../src/deployments/deploymentScheduler.js";
import { DeploymentService } from "../../src/deployments/deploymentService.js";
import type { DeploymentRecord } from "../../src/deployments/ports.js";
import { DEFAULT_SCHEDULING_POLICY, type SchedulingPolicy } from "../../src/deployments/schedulingPolicy.js";
import { SqlDeploymentStore } from "../../src/stores/sql/sqlDeploymentStore.js";
import { SteppedClock } from "../support/steppedClock.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  type OpenedStores,
  STORE_BACKENDS,
  TEST_AGENT,
} from "../support/storeFixtures.js";

const MINUTE = 60_000;
const POLICY: SchedulingPolicy = { ...DEFAULT_SCHEDULING_POLICY, jitterMaxMs: 0, staleClaimMs: 5 * MINUTE };
const SILENT = { info: () => {}, warn: () => {} };

/** Sessions opened by run key, shared by every replica (as the database's session names are). */
class Sessions {
  readonly byKey = new Map<string, string>();
  created = 0;
  entry(options: { hangAfterCreate?: boolean } = {}): Pick<SessionEntry, "openKeyed" | "findKeyed"> {
    return {
      findKeyed: async (_workspaceId, _space, key) => {
        const id = this.byKey.get(key);
        return id ? ({ id } as SessionRecord) : null;
      },
      openKeyed: async (_workspaceId, _space, key) => {
        let id = this.byKey.get(key);
        if (!id) {
          id = `sesn_${++this.created}`;
          this.byKey.set(key, id);
        }
        // A replica that stops here opened the session but never records it.
        if (options.hangAfterCreate) await new Promise(() => {});
        return { id } as SessionRecord;
      },
    };
  }
}

describe.each(BACKEND_NAMES)("the deployment scheduler on %s", (backend) => {
  let opened: OpenedStores | undefined;
  let clock: SteppedClock;
  let store: SqlDeploymentStore;
  const unavailable = backendUnavailable(backend);

  beforeEach(async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    clock = new SteppedClock(Date.UTC(2030, 0, 1, 0, 0, 30));
    opened = await STORE_BACKENDS[backend](clock);
    store = new SqlDeploymentStore(opened.db, backend === "PostgreSQL stores" ? "postgres" : "sqlite");
  });
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  function replica(sessions: Sessions, options: { hangAfterCreate?: boolean } = {}) {
    const service = new DeploymentService({
      store,
      entry: sessions.entry(options),
      pinner: {
        pin: async () => ({ ...TEST_AGENT, agentId: "agent_1", version: 1 }) as ExecutableAgentSnapshot,
      },
      environments: { get: async () => ({ archivedAt: null }) as never },
      inputs: { initialInputs: async () => [], resources: () => [] },
      clock,
    });
    return { service, scheduler: new DeploymentScheduler(store, service, POLICY, clock, SILENT) };
  }

  const everyMinute = (service: DeploymentService): Promise<DeploymentRecord> =>
    service.create(
      { workspaceId: "wrkspc_1", actor: "test" },
      {
        name: "tick",
        description: null,
        agent: { id: "agent_1" },
        environmentId: "env_1",
        initialEvents: [{ type: "user.message", content: [{ type: "text", text: "tick" }] }],
        resources: [],
        vaultIds: [],
        metadata: {},
        budget: null,
        schedule: { expression: "* * * * *", timezone: "UTC" },
      },
    );

  async function settledRuns(deploymentId: string) {
    const page = await store.listRuns("wrkspc_1", {
      limit: 1000,
      cursor: null,
      deploymentId,
      agentIds: null,
      hasError: null,
      triggerType: "schedule",
      createdAt: {},
    });
    return page.data;
  }

  it("replicas whose passes interleave fire each instant once", async () => {
    const sessions = new Sessions();
    const a = replica(sessions);
    const b = replica(sessions);
    const deployment = await everyMinute(a.service);
    for (let step = 0; step < 20; step++) {
      await clock.advance(15_000);
      // Both look at once (on PostgreSQL truly side by side), then one after the other.
      await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
      await b.scheduler.tick();
      await Promise.all([a.scheduler.settled(), b.scheduler.settled()]);
    }
    const runs = await settledRuns(deployment.id);
    const instants = runs.map((r) => (r.trigger.type === "schedule" ? r.trigger.scheduledAt : 0)).sort();
    expect(instants).toEqual(Array.from({ length: 5 }, (_, i) => Date.UTC(2030, 0, 1, 0, 1 + i)));
    expect(sessions.created).toBe(5);
    expect(new Set(runs.map((r) => r.sessionId)).size).toBe(5);
    await a.scheduler.stop();
    await b.scheduler.stop();
  });

  it("a claim its replica left after opening the session is settled by another with that session", async () => {
    const sessions = new Sessions();
    const stopped = replica(sessions, { hangAfterCreate: true });
    const survivor = replica(sessions);
    const deployment = await everyMinute(survivor.service);
    await clock.advance(MINUTE);
    await stopped.scheduler.tick();
    expect(sessions.created).toBe(1);
    // Not shown while unsettled; not taken over before the stale time.
    expect(await settledRuns(deployment.id)).toEqual([]);
    const claimed = await store.unsettled(clock.now() + 1, 10);
    expect(claimed).toHaveLength(1);

    // The survivor fires later instants itself, and settles the abandoned claim once it is stale.
    await clock.advance(POLICY.staleClaimMs + 1);
    await survivor.scheduler.tick();
    await survivor.scheduler.settled();
    await survivor.scheduler.tick();
    await survivor.scheduler.settled();
    const runs = await settledRuns(deployment.id);
    const abandoned = runs.find((r) => r.id === claimed[0]!.id);
    expect(abandoned?.sessionId).toBe(sessions.byKey.get(claimed[0]!.id));
    // One session per run, the abandoned one's included.
    expect(sessions.created).toBe(runs.length);
    expect(await store.unsettled(clock.now() + 1, 10)).toEqual([]);
    await survivor.scheduler.stop();
  });

  it("a manual run its request abandoned is recorded as failed, never opened long after", async () => {
    const sessions = new Sessions();
    const survivor = replica(sessions);
    const deployment = await everyMinute(survivor.service);
    // The request's replica stopped between the claim and the session.
    await store.insertRun({
      id: "drun_abandoned",
      workspaceId: "wrkspc_1",
      deploymentId: deployment.id,
      agent: deployment.agent,
      trigger: { type: "manual" },
      sessionId: null,
      error: null,
      claimedAt: clock.now(),
      createdAt: null,
    });
    await clock.advance(POLICY.staleClaimMs + 1);
    await survivor.scheduler.tick();
    await survivor.scheduler.settled();
    const run = await store.getRun("wrkspc_1", "drun_abandoned");
    expect(run).toMatchObject({ sessionId: null, error: { type: "unknown_error" } });
    expect(sessions.byKey.has("drun_abandoned")).toBe(false);
    await survivor.scheduler.stop();
  });
});
