import type { WebhookEvents } from "../coordinator/webhookOutbox.js";
import type { DeploymentChanges } from "../deployments/deploymentChanges.js";

/**
 * Deployments' changes as webhook events (`deployment.*`, `deployment_run.*`): each stored change
 * is enqueued once, after it committed, like the other resources' events. `events` is read at the
 * change, so the webhook service may be composed after the deployment service.
 */
export function deploymentWebhooks(
  events: () => WebhookEvents,
  warn: (message: string, error: unknown) => void,
): DeploymentChanges {
  return {
    changed(change) {
      const subject = "deployment" in change ? change.deployment : change.run;
      events()
        .emit({ workspaceId: subject.workspaceId, type: change.type, id: subject.id })
        .catch((error: unknown) => warn(`could not enqueue the ${change.type} webhook event`, error));
    },
  };
}
