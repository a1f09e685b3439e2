import type { AcpRuntimeCatalog, AcpRuntimeDefinition } from "./ports.js";
import { readAcpRuntimeFile } from "./runtimeFile.js";
import { SHIPPED_ACP_RUNTIMES } from "./shippedRuntimes.js";

/**
 * The runtimes one process knows: the shipped definitions, then the operator's (`operator`
 * replaces a shipped one of the same name in its place, or adds one after them).
 */
export function acpRuntimeCatalog(operator: readonly AcpRuntimeDefinition[] = []): AcpRuntimeCatalog {
  const byName = new Map<string, AcpRuntimeDefinition>();
  for (const definition of [...SHIPPED_ACP_RUNTIMES, ...operator]) byName.set(definition.name, definition);
  const all = [...byName.values()];
  return {
    get: (name) => byName.get(name) ?? null,
    list: () => all,
  };
}

/** The catalog of `--acp-runtimes <file>` (shipped ones alone without it); a bad file throws. */
export function acpRuntimeCatalogFrom(path: string | undefined): AcpRuntimeCatalog {
  return acpRuntimeCatalog(path === undefined || path === "" ? [] : readAcpRuntimeFile(path));
}
