import { resolve } from "node:path";
import { NoneTierProvider } from "../sandbox/noneTier.js";
import { TieredSandboxProvider } from "../sandbox/tieredProvider.js";

/**
 * The sandbox tiers this process can realize, each session's workspace under `workspaceRoot`.
 * Which tier a session gets is not decided here: its environment revision names it, and a tier
 * missing on this host is refused with instructions, never swapped for another.
 */
export function createSandboxes(workspaceRoot: string): TieredSandboxProvider {
  return new TieredSandboxProvider({ none: new NoneTierProvider(resolve(workspaceRoot)) });
}
