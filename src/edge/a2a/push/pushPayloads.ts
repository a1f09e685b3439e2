import type { StreamResponse } from "@a2a-js/sdk";
import { V03PushNotificationSerializer } from "@a2a-js/sdk/compat/v0_3/server";
import { V1PushNotificationSerializer } from "@a2a-js/sdk/server";
import type { PushMessage } from "../../../coordinator/pushOutbox.js";

const v1 = new V1PushNotificationSerializer();
const v03 = new V03PushNotificationSerializer();

/**
 * A notification's body as the SDK's own sender shapes it for the protocol version the config was
 * set over: protocol 1.0 gets the StreamResponse (`{"statusUpdate": …}`, `application/a2a+json`),
 * 0.3 gets its `kind`-tagged event.
 */
export function pushMessageOf(event: StreamResponse, wireVersion: string): PushMessage {
  const { body, contentType } = (wireVersion === "0.3" ? v03 : v1).serialize(event);
  return { body, contentType };
}
