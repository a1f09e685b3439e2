import type { EdgeServices } from "../http/edgeServices.js";

/** The application services the Managed Agents edge calls (the same ones every edge gets). */
export type ManagedAgentsDeps = EdgeServices;

export const toMs = (iso: string | undefined): number | undefined =>
  iso === undefined ? undefined : Date.parse(iso);

export function rangeMs(range: { gt?: string; gte?: string; lt?: string; lte?: string } | undefined) {
  if (!range) return undefined;
  return { gt: toMs(range.gt), gte: toMs(range.gte), lt: toMs(range.lt), lte: toMs(range.lte) };
}
