import { CONTROL_METHODS } from "../http/controlPorts.js";

export { CONTROL_METHODS };

/** Where the link's calls are served, on Control and on the Coordinator alike. */
export const LINK_ROUTE_PREFIX = "/internal/v1/rpc";

/** The shortest AWAKEN_CONTROL_TOKEN either side accepts: it stands for the whole Control plane. */
export const MIN_CONTROL_TOKEN_LENGTH = 32;

/** One service a side serves: the object and the methods of it the peer may call (an allow-list). */
export interface LinkService {
  // biome-ignore lint/suspicious/noExplicitAny: the link calls whatever allow-listed method by name
  impl: Record<string, any>;
  methods: readonly string[];
}

export type LinkServices = Record<string, LinkService>;

/**
 * What the Coordinator serves Control: catalog registration, the sessions' credential pins, and
 * the exact skill versions publications pin (skills are stored with the Coordinator's resources).
 */
export const COORDINATOR_METHODS = {
  registrar: ["register"],
  sessionPins: ["get", "advance"],
  skillVersions: ["resolve"],
} as const;

/** `services` with exactly the methods `table` names for each. */
export function linkServices<T extends Record<string, readonly string[]>>(
  table: T,
  impls: { [K in keyof T]: object },
): LinkServices {
  const out: LinkServices = {};
  for (const name of Object.keys(table)) {
    out[name] = { impl: impls[name] as Record<string, unknown>, methods: table[name]! };
  }
  return out;
}
