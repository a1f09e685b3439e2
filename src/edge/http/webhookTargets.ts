/**
 * Webhook URLs a client hands in (A2A push notifications) are hostile: they must be https, or
 * http to a host the operator listed, and reach only public addresses unless the operator listed
 * the host (the same address policy as every connection made for users). The check at set time
 * refuses early; each delivery goes through the connector, which checks every address it connects
 * to again (a name that later resolves elsewhere, DNS rebinding, is refused then).
 */

import type { OutboundConnector } from "../../kernel/outboundConnector.js";
import { canonicalHost } from "../../kernel/outboundPolicy.js";

/** Named in every refusal, so an operator's fix is one step away. */
export const ALLOW_PUSH_HOSTS_HINT =
  "an operator can allow hosts with --allow-push-host or AWAKEN_ALLOW_PUSH_HOSTS";

const MAX_URL_LENGTH = 2048;

export class WebhookTargets {
  constructor(readonly connector: OutboundConnector) {}

  /** Why `raw` may not be a webhook URL (safe to show the client), or null when it may. */
  async refusal(raw: string): Promise<string | null> {
    if (raw.length === 0 || raw.length > MAX_URL_LENGTH) {
      return `the push notification url must be 1 to ${MAX_URL_LENGTH} characters`;
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return "the push notification url is not an absolute URL";
    }
    if (url.username !== "" || url.password !== "") {
      return "the push notification url may not carry credentials; use the config's token or authentication";
    }
    const host = canonicalHost(url.hostname);
    const listed = this.connector.policy.lists(host);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && listed)) {
      return `the push notification url must be https (http only to a host the operator allows: ${ALLOW_PUSH_HOSTS_HINT})`;
    }
    const refused = await this.connector.admit(url);
    if (refused) {
      return `${host} is or resolves to a loopback, link-local, private or reserved address, which push notifications may not reach (${ALLOW_PUSH_HOSTS_HINT})`;
    }
    return null;
  }
}
