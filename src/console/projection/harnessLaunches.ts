/**
 * A session's ACP harness stages → its launches, a pure projection. Each launch of the Brain starts
 * by installing the runtime's package; its attempts (launching, initializing) follow until it is
 * ready or failed. Stages committed before any `installing` (none today) form a launch of their own.
 */
import type { HarnessStage } from "../api/awaken.js";

export interface HarnessLaunch {
  stages: HarnessStage[];
  /** The launch's last stage. */
  last: HarnessStage;
}

export interface HarnessView {
  runtime: string | null;
  current: HarnessStage | null;
  launches: HarnessLaunch[];
  /** What the last `ready` stage recorded: the harness's own name and version, and whether it reloaded. */
  ready: HarnessStage | null;
}

export function harnessView(stages: readonly HarnessStage[]): HarnessView {
  const launches: HarnessLaunch[] = [];
  for (const stage of stages) {
    const open = launches.at(-1);
    if (!open || stage.stage === "installing") launches.push({ stages: [stage], last: stage });
    else {
      open.stages.push(stage);
      open.last = stage;
    }
  }
  const current = stages.at(-1) ?? null;
  return {
    runtime: current?.runtime ?? null,
    current,
    launches,
    ready: stages.findLast((stage) => stage.stage === "ready") ?? null,
  };
}

/** `installing`, or `launching (attempt 2)` for a retried attempt. */
export function stageLabel(stage: HarnessStage): string {
  return stage.attempt !== undefined && stage.attempt > 1
    ? `${stage.stage} (attempt ${stage.attempt})`
    : stage.stage;
}
