import type { DeploymentRecord, DeploymentRunRecord } from "./ports.js";

/**
 * Every change of a deployment's state and every recorded run passes through `DeploymentChanges`
 * once, after it is stored: the one place a `deployment.*` / `deployment_run.*` notification (a
 * webhook, a metric) is emitted from. `deployment.paused` carries the reason (manual or an error).
 */
export type DeploymentChange =
  | {
      type:
        | "deployment.created"
        | "deployment.updated"
        | "deployment.paused"
        | "deployment.unpaused"
        | "deployment.archived";
      deployment: DeploymentRecord;
    }
  | { type: "deployment_run.succeeded" | "deployment_run.failed"; run: DeploymentRunRecord };

export interface DeploymentChanges {
  changed(change: DeploymentChange): void;
}

export const NO_DEPLOYMENT_CHANGES: DeploymentChanges = { changed: () => {} };
