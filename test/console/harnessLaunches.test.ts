import { describe, expect, it } from "vitest";
import type { HarnessStage } from "../../src/console/api/awaken.js";
import { harnessView, stageLabel } from "../../src/console/projection/harnessLaunches.js";

let clock = 0;
const stage = (name: HarnessStage["stage"], detail: Partial<HarnessStage> = {}): HarnessStage => ({
  runtime: "fake",
  stage: name,
  processed_at: new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString(),
  ...detail,
});

describe("the harness launches projection", () => {
  it("groups stages into launches, each starting at installing, its retried attempts inside it", () => {
    const view = harnessView([
      stage("installing"),
      stage("launching", { attempt: 1 }),
      stage("initializing", { attempt: 1 }),
      stage("launching", { attempt: 2 }),
      stage("initializing", { attempt: 2 }),
      stage("failed", { error: "exited" }),
      stage("installing"),
      stage("launching", { attempt: 1 }),
      stage("initializing", { attempt: 1 }),
      stage("ready", { loaded: true, acp_session_id: "s1", agent_info: { name: "h", version: "2" } }),
    ]);
    expect(view.launches.map((launch) => [launch.stages.length, launch.last.stage])).toEqual([
      [6, "failed"],
      [4, "ready"],
    ]);
    expect(view.current?.stage).toBe("ready");
    expect(view.ready).toMatchObject({ loaded: true, agent_info: { name: "h", version: "2" } });
    expect(view.launches[0]?.stages.map(stageLabel)).toEqual([
      "installing",
      "launching",
      "initializing",
      "launching (attempt 2)",
      "initializing (attempt 2)",
      "failed",
    ]);
  });

  it("a session with no stages has no launch, no runtime and no current stage", () => {
    expect(harnessView([])).toEqual({ runtime: null, current: null, launches: [], ready: null });
  });

  it("the last ready stage is kept while a later launch is under way", () => {
    const view = harnessView([stage("installing"), stage("ready", { loaded: false }), stage("installing")]);
    expect(view.current?.stage).toBe("installing");
    expect(view.ready?.loaded).toBe(false);
    expect(view.launches).toHaveLength(2);
  });
});
