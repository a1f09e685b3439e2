import type { Environment } from "../api/wire.js";

/**
 * The sandbox tier and provisioning an environment asks for (the server's own config fields; unset
 * means the server's defaults), as two short labels.
 */
export function sandboxOf(environment: Environment): [string, string] {
  const config = environment.config as {
    type: string;
    sandbox?: { tier?: string | null; provisioning?: string | null } | null;
  };
  if (config.type === "self_hosted") return ["self-hosted worker", "the worker's"];
  return [
    `tier ${config.sandbox?.tier ?? "default"}`,
    `provisioning ${config.sandbox?.provisioning ?? "default"}`,
  ];
}
