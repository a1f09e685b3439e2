import { Option } from "commander";
import { OutboundConnector } from "../kernel/outboundConnector.js";
import { InvalidAllowListEntry, OutboundPolicy } from "../kernel/outboundPolicy.js";

/** The environment variable behind `--allow-private-mcp-host` (the flag wins when both are set). */
export const ALLOW_PRIVATE_HOSTS_ENV = "AWAKEN_ALLOW_PRIVATE_HOSTS";

/** `--allow-private-mcp-host`, for every process that connects to MCP servers (up, worker). */
export function allowPrivateHostOption(): Option {
  return new Option(
    "--allow-private-mcp-host <hosts>",
    "private MCP servers (and their OAuth token endpoints) and remote A2A agents (a2a: models) this host may connect to for users: " +
      `hostnames, IP addresses or CIDR ranges, comma-separated (default ${ALLOW_PRIVATE_HOSTS_ENV}, else none: ` +
      "loopback, link-local, private and reserved addresses are refused)",
  );
}

/** A bad allow-list entry: the process refuses to start, naming it. */
export class AllowListError extends Error {}

/**
 * The connector for every host-made connection on a user's behalf, with the operator's allow-list
 * (`flag`, else the environment variable). Throws `AllowListError` for an entry it cannot read.
 */
export function outboundFor(flag: string | undefined, env: NodeJS.ProcessEnv): OutboundConnector {
  const list = flag ?? env[ALLOW_PRIVATE_HOSTS_ENV];
  const source = flag !== undefined ? "--allow-private-mcp-host" : ALLOW_PRIVATE_HOSTS_ENV;
  try {
    return new OutboundConnector({ policy: OutboundPolicy.allowing(list) });
  } catch (error) {
    if (error instanceof InvalidAllowListEntry) throw new AllowListError(`${source}: ${error.message}`);
    throw error;
  }
}

/** The environment variable behind `--allow-push-host` (the flag wins when both are set). */
export const ALLOW_PUSH_HOSTS_ENV = "AWAKEN_ALLOW_PUSH_HOSTS";

/** `--allow-push-host`: webhook hosts push notifications may reach over http or at private addresses. */
export function allowPushHostOption(): Option {
  return new Option(
    "--allow-push-host <hosts>",
    "webhook hosts A2A push notifications may reach over plain http or at loopback, link-local or " +
      `private addresses: hostnames, IP addresses or CIDR ranges, comma-separated (default ${ALLOW_PUSH_HOSTS_ENV}, ` +
      "else none: https to public addresses only)",
  );
}

/** The connector push notifications are delivered through, with the operator's push allow-list. */
export function pushOutboundFor(flag: string | undefined, env: NodeJS.ProcessEnv): OutboundConnector {
  const list = flag ?? env[ALLOW_PUSH_HOSTS_ENV];
  const source = flag !== undefined ? "--allow-push-host" : ALLOW_PUSH_HOSTS_ENV;
  try {
    return new OutboundConnector({ policy: OutboundPolicy.allowing(list) });
  } catch (error) {
    if (error instanceof InvalidAllowListEntry) throw new AllowListError(`${source}: ${error.message}`);
    throw error;
  }
}
