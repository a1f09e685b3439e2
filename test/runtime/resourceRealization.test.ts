import { afterEach, describe, expect, it } from "vitest";
import type { ExecutableAgentSnapshot } from "../../src/coordinator/ports.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { createProviderRouter } from "../../src/providers/router.js";
import type { RunResources } from "../../src/resources/ports.js";
import { DEFAULT_RETRY_POLICY } from "../../src/runtime/retryPolicy.js";
import { TurnRunner } from "../../src/runtime/turnRunner.js";
import { TieredSandboxProvider } from "../../src/sandbox/tieredProvider.js";
import { sessionWithQueuedRun, TEST_AGENT } from "../support/storeFixtures.js";

// A run's resources are realized at its start. What the resources are (a skill version deleted
// since its pin, a store no longer mounted) ends the run saying why; an error of the attempt (the
// database or the coordinator unreachable) must not: the attempt fails, the lease lapses and the
// run is claimed again, as after any crash.

const LEASE_MS = 1_000;
type Fixture = Awaited<ReturnType<typeof sessionWithQueuedRun>>;
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.handle.close();
  fx = undefined;
});

/** The run's resource port answering `resolve` with `outcome`; nothing else is reached. */
function resolving(outcome: () => Promise<never>): RunResources {
  const unreached = () => Promise.reject(new Error("not reached: resolve failed first"));
  return {
    resolve: outcome,
    readBlob: unreached,
    memorySnapshot: unreached,
    writeMemory: unreached,
    repositoryToken: unreached,
  };
}

/** The session's agent pins a custom skill, so the run has resources to ask for. */
const AGENT_WITH_SKILL: ExecutableAgentSnapshot = {
  ...TEST_AGENT,
  definition: {
    ...TEST_AGENT.definition,
    skills: [{ type: "custom" as const, skill_id: "skill_1", version: "skillver_1" }],
  },
};

async function runWith(resources: RunResources, agent = AGENT_WITH_SKILL) {
  fx = await sessionWithQueuedRun(undefined, { agent });
  const stores = fx.stores;
  const activation = (await stores.dispatch.claim("w0", LEASE_MS))!;
  const runner = new TurnRunner(
    activation,
    {
      readThread: (threadId, afterSeq) => stores.history.readThread(threadId, afterSeq),
      commit: (op) => stores.dispatch.commit(op),
      publish: () => {},
      providers: createProviderRouter({}),
      sandboxes: new TieredSandboxProvider({}),
      clock: fx.clock,
      retry: DEFAULT_RETRY_POLICY,
      crashBudget: 5,
      modelIdleTimeoutMs: 60_000,
      log: { info: () => {}, warn: () => {} },
      resources,
    },
    new AbortController().signal,
  );
  return { runner, history: () => stores.history.readThread(activation.threadId, 0) };
}

describe("realizing a run's resources", () => {
  it("a transient failure (the coordinator or database unreachable) fails the attempt, not the session", async () => {
    const { runner, history } = await runWith(
      resolving(() => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432"))),
    );
    await expect(runner.run()).rejects.toThrow(/ECONNREFUSED/);
    const facts = await history();
    expect(facts.map((f) => f.type)).not.toContain("session.error");
    // The lease lapses and the run is claimable again: another attempt will realize it.
    fx!.clock.advance(LEASE_MS + 1);
    expect((await fx!.stores.dispatch.claim("w1", LEASE_MS))?.crashCount).toBe(1);
  });

  it("a refusal of what the resources are (a pinned version deleted since) ends the run, saying why", async () => {
    const { runner, history } = await runWith(
      resolving(() =>
        Promise.reject(
          new AwakenError("not_found", "the agent's skill skill_1 version skillver_1 no longer exists"),
        ),
      ),
    );
    expect(await runner.run()).toBe("settled");
    const facts = await history();
    const error = facts.find((f) => f.type === "session.error");
    expect(error).toBeDefined();
    expect(String((error!.body.error as { message: string }).message)).toContain(
      "the session's resources could not be made available: the agent's skill skill_1 version skillver_1 no longer exists",
    );
    expect(facts.at(-1)?.body).toMatchObject({ stop_reason: { type: "retries_exhausted" } });
  });

  it("a session without resources, whose agent pins no custom skill, is not asked for any", async () => {
    let asked = 0;
    const { runner, history } = await runWith(
      resolving(() => {
        asked += 1;
        return Promise.reject(new Error("not reached: the claim saw nothing to resolve"));
      }),
      TEST_AGENT,
    );
    expect(await runner.run()).toBe("settled");
    expect(asked).toBe(0);
    expect((await history()).map((f) => f.type)).not.toContain("session.error");
  });
});
