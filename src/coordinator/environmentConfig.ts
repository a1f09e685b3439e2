/**
 * An environment's resolved `config` (wire §2.2) and the pure rules for creating and updating it.
 *
 * Request params default every field to null ("not set"); the stored form is always complete, so
 * a worker or sandbox never has to guess a default.
 */
import { AwakenError } from "../kernel/errors.js";
import { packageRequirementProblem } from "../kernel/packageRequirements.js";
import { DEFAULT_SANDBOX_TIER, type SandboxTierName } from "../kernel/sandboxTiers.js";

export type NetworkingConfig =
  | { type: "unrestricted" }
  | { type: "limited"; allowed_hosts: string[]; allow_mcp_servers: boolean; allow_package_managers: boolean };

export const PACKAGE_MANAGERS = ["apt", "cargo", "gem", "go", "npm", "pip"] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];

export interface PackagesConfig {
  type: "packages";
  apt: string[];
  cargo: string[];
  gem: string[];
  go: string[];
  npm: string[];
  pip: string[];
}

/**
 * Awaken extension (not in the Managed Agents wire): how a cloud environment isolates Hand tools.
 * `bwrap` is the default; `none` (a plain subprocess, no isolation) must be asked for explicitly,
 * and only on a server whose operator enabled weaker tiers (sandboxTierPolicy.ts).
 * Part of the revision, so a session's tier is frozen with the revision it pinned.
 */
export type { SandboxTierName } from "../kernel/sandboxTiers.js";
export { DEFAULT_SANDBOX_TIER, SANDBOX_TIER_NAMES } from "../kernel/sandboxTiers.js";
/**
 * When a session's sandbox begins: `eager`
 * realizes it when a run starts, before the model or any tool; `on_tool_use` runs model-only turns
 * with no sandbox and realizes exactly one at the first Hand tool. Frozen per session with the
 * revision it pins.
 */
export type SandboxProvisioning = "eager" | "on_tool_use";
export const SANDBOX_PROVISIONING: readonly SandboxProvisioning[] = ["eager", "on_tool_use"];
export const DEFAULT_SANDBOX_PROVISIONING: SandboxProvisioning = "on_tool_use";
export interface SandboxConfig {
  tier: SandboxTierName;
  provisioning: SandboxProvisioning;
  /**
   * The `container` tier's image reference (only with that tier), frozen with the revision so a
   * session runs the image its revision named; admitted against the operator's allow-list
   * (sandboxTierPolicy.ts). A build's digest (`name@sha256:…`) fits here unchanged.
   */
  image?: string;
}

export type EnvironmentConfig =
  | { type: "cloud"; networking: NetworkingConfig; packages: PackagesConfig; sandbox: SandboxConfig }
  | { type: "self_hosted" };

export type LimitedNetworkingInput = {
  type: "limited";
  allowed_hosts?: string[] | null;
  allow_mcp_servers?: boolean | null;
  allow_package_managers?: boolean | null;
};
export type NetworkingInput = { type: "unrestricted" } | LimitedNetworkingInput;
export interface PackagesInput {
  type?: "packages";
  apt?: string[] | null;
  cargo?: string[] | null;
  gem?: string[] | null;
  go?: string[] | null;
  npm?: string[] | null;
  pip?: string[] | null;
}
export interface SandboxInput {
  tier?: SandboxTierName | null;
  provisioning?: SandboxProvisioning | null;
  image?: string | null;
}
export type EnvironmentConfigInput =
  | {
      type: "cloud";
      networking?: NetworkingInput | null;
      packages?: PackagesInput | null;
      sandbox?: SandboxInput | null;
    }
  | { type: "self_hosted" };

const UNRESTRICTED: NetworkingConfig = { type: "unrestricted" };

function emptyPackages(): PackagesConfig {
  return { type: "packages", apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] };
}

/**
 * `base` supplies the value of every field the input leaves unset: the SDK says "on update, omitted
 * fields preserve the existing value", and a `limited` block replacing `unrestricted` starts from the
 * creation defaults (no hosts, both `allow_*` false).
 */
function resolveNetworking(
  input: NetworkingInput | null | undefined,
  base: NetworkingConfig,
): NetworkingConfig {
  if (input === null || input === undefined) return structuredClone(base);
  if (input.type === "unrestricted") return { type: "unrestricted" };
  const prior =
    base.type === "limited"
      ? base
      : { allowed_hosts: [], allow_mcp_servers: false, allow_package_managers: false };
  return {
    type: "limited",
    allowed_hosts: [...(input.allowed_hosts ?? prior.allowed_hosts)],
    allow_mcp_servers: input.allow_mcp_servers ?? prior.allow_mcp_servers,
    allow_package_managers: input.allow_package_managers ?? prior.allow_package_managers,
  };
}

/**
 * Each package list is its own field: an omitted (or null) list keeps `base`'s list. Every new
 * revision's npm and pip entries must be plain registry requirements (kernel/packageRequirements.ts),
 * kept ones included: an entry stored before that rule is refused here too, naming it.
 */
function resolvePackages(input: PackagesInput | null | undefined, base: PackagesConfig): PackagesConfig {
  const out = structuredClone(base);
  for (const manager of PACKAGE_MANAGERS) {
    const list = input?.[manager];
    if (list !== null && list !== undefined) out[manager] = [...list];
  }
  const problem = packageRequirementProblem(out);
  if (problem !== null) throw new AwakenError("invalid_request", problem);
  return out;
}

/**
 * An omitted field keeps `base`'s (on create: the default). Revisions stored before a field existed
 * read as its default.
 */
function resolveSandbox(
  input: SandboxInput | null | undefined,
  base: Partial<SandboxConfig> | undefined,
): SandboxConfig {
  const tier = input?.tier ?? base?.tier ?? DEFAULT_SANDBOX_TIER;
  const image = input?.image ?? base?.image;
  if (input?.image != null && tier !== "container")
    throw new AwakenError("invalid_request", 'config.sandbox.image is only for the "container" tier');
  return {
    tier,
    provisioning: input?.provisioning ?? base?.provisioning ?? DEFAULT_SANDBOX_PROVISIONING,
    // Moving off the container tier drops its image.
    ...(tier === "container" && image !== undefined ? { image } : {}),
  };
}

/** The container tier's image a stored cloud config names, if any. */
export function sandboxImageOf(config: EnvironmentConfig): string | undefined {
  if (config.type !== "cloud") return undefined;
  return (config.sandbox as Partial<SandboxConfig> | undefined)?.image;
}

/** The provisioning a stored cloud config asks for (revisions from before the field: the default). */
export function sandboxProvisioningOf(config: EnvironmentConfig): SandboxProvisioning | null {
  if (config.type !== "cloud") return null;
  return (config.sandbox as Partial<SandboxConfig> | undefined)?.provisioning ?? DEFAULT_SANDBOX_PROVISIONING;
}

/** The tier a stored cloud config asks for, tolerating revisions written before the field existed. */
export function sandboxTierOf(config: EnvironmentConfig): SandboxTierName | null {
  if (config.type !== "cloud") return null;
  return (config.sandbox as SandboxConfig | undefined)?.tier ?? DEFAULT_SANDBOX_TIER;
}

/**
 * Rules that span fields. Wire §2.2 / SDK: packages under `limited` networking need
 * `networking.allow_package_managers: true`, since installing them reaches public registries. Only a
 * non-empty package list counts as "packages specified"; the empty default never trips the rule.
 */
export function validateEnvironmentConfig(config: EnvironmentConfig): void {
  if (config.type !== "cloud" || config.networking.type !== "limited") return;
  if (config.networking.allow_package_managers) return;
  const listed = PACKAGE_MANAGERS.filter((m) => config.packages[m].length > 0);
  if (listed.length > 0) {
    throw new AwakenError(
      "invalid_request",
      `config.networking.allow_package_managers must be true when config.packages lists packages ` +
        `(${listed.join(", ")}) under limited networking; set it to true or remove the packages`,
    );
  }
}

/** Create: an omitted (or null) config is a cloud environment with unrestricted networking and no packages. */
export function resolveEnvironmentConfig(
  input: EnvironmentConfigInput | null | undefined,
): EnvironmentConfig {
  if (input === null || input === undefined || input.type === "cloud") {
    const config: EnvironmentConfig = {
      type: "cloud",
      networking: resolveNetworking(input?.networking, UNRESTRICTED),
      packages: resolvePackages(input?.packages, emptyPackages()),
      sandbox: resolveSandbox(input?.sandbox, undefined),
    };
    validateEnvironmentConfig(config);
    return config;
  }
  return { type: "self_hosted" };
}

/**
 * Update: an omitted (or null) config keeps the current one; fields the input omits keep their current
 * values; the type cannot change (400 `invalid_config_type_change`, which the SDK maps to its own class).
 */
export function applyEnvironmentConfigUpdate(
  current: EnvironmentConfig,
  input: EnvironmentConfigInput | null | undefined,
): EnvironmentConfig {
  if (input === null || input === undefined) return structuredClone(current);
  if (input.type !== current.type) {
    throw new AwakenError(
      "invalid_config_type_change",
      `config.type cannot change from "${current.type}" to "${input.type}" after creation; ` +
        `create a new environment instead`,
    );
  }
  if (input.type === "self_hosted" || current.type === "self_hosted") return { type: "self_hosted" };
  const config: EnvironmentConfig = {
    type: "cloud",
    networking: resolveNetworking(input.networking, current.networking),
    packages: resolvePackages(input.packages, current.packages),
    sandbox: resolveSandbox(input.sandbox, current.sandbox),
  };
  validateEnvironmentConfig(config);
  return config;
}
