import { decodeMeter, encodeMeter } from "../../coordinator/facts/meterCodec.js";
import { decodePending, encodePending } from "../../coordinator/facts/pendingCodec.js";
import { decodeUsage, encodeUsage } from "../../coordinator/facts/usageCodec.js";
import type { PendingAction, SessionMeter, SessionStatus, SessionUsage } from "../../coordinator/facts.js";
import type { CredentialPin, ExecutableAgentSnapshot, SessionRecord } from "../../coordinator/ports.js";
import { fromJson, toJson } from "./db.js";
import type { Database } from "./schema.js";

type SessionRow = Database["sessions"];

export function sessionToRow(s: SessionRecord): SessionRow {
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    agent_id: s.agent.agentId,
    agent_version: s.agent.version,
    agent_snapshot_json: toJson(s.agent),
    environment_id: s.environmentId,
    environment_revision: s.environmentRevision,
    thread_id: s.threadId,
    title: s.title,
    metadata_json: toJson(s.metadata),
    status: s.status,
    pending_json: pendingJson(s.pending),
    usage_json: usageJson(s.usage, s.meter),
    resources_json: toJson(s.resources),
    vault_ids_json: toJson(s.vaultIds),
    credential_pins_json: toJson(s.credentialPins),
    budget_json: s.budget === null ? null : toJson(s.budget),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    archived_at: s.archivedAt,
    deleted_at: null,
    data_subject: s.dataSubject,
    user_profile_id: s.userProfileId ?? null,
  };
}

/** A read session row's agent snapshot: its own, or the catalog's the read joined in (`SESSION_AGENT_SQL`). */
function agentSnapshotOf(r: SessionRow): string {
  if (!r.agent_snapshot_json) throw new Error(`session ${r.id}: its agent snapshot was not read`);
  return r.agent_snapshot_json;
}

export function rowToSession(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    agent: fromJson<ExecutableAgentSnapshot>(agentSnapshotOf(r)),
    environmentId: r.environment_id,
    environmentRevision: Number(r.environment_revision),
    threadId: r.thread_id,
    title: r.title,
    metadata: fromJson<Record<string, string>>(r.metadata_json),
    status: r.status as SessionStatus,
    pending: pendingOf(r.pending_json),
    usage: usageOf(r.usage_json),
    meter: meterOf(r.usage_json),
    resources: fromJson<unknown[]>(r.resources_json),
    vaultIds: fromJson<string[]>(r.vault_ids_json),
    // Rows read by a writer that selected fewer columns carry no pins; sessions created before
    // migration 004 pinned nothing.
    credentialPins: r.credential_pins_json ? fromJson<CredentialPin[]>(r.credential_pins_json) : [],
    budget: r.budget_json === null ? null : fromJson<unknown>(r.budget_json),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    archivedAt: r.archived_at === null ? null : Number(r.archived_at),
    dataSubject: r.data_subject ?? null,
    userProfileId: r.user_profile_id ?? null,
  };
}

/** A stored pending column's actions, in the domain's answer kinds. */
export function pendingOf(json: string): PendingAction[] {
  return decodePending(fromJson(json));
}

/** Pending actions as a session or commit row stores them. */
export function pendingJson(pending: readonly PendingAction[]): string {
  return toJson(encodePending(pending));
}

/** Stored usage, every counter present (a counter left out is 0). */
export function usageOf(json: string): SessionUsage {
  return decodeUsage(fromJson(json));
}

/** The stored usage column's session meter (list cost, running time). */
export function meterOf(json: string): SessionMeter {
  return decodeMeter(fromJson(json));
}

/**
 * Usage as a commit or session row stores it: the counters that are not 0, then the meter's keys,
 * in the stored encoding (`{}` for a new session). Every commit writes it again, so a key that
 * says 0 would be written on every one; a row of an older build that spells its zeros reads the same.
 */
export function usageJson(usage: SessionUsage, meter: SessionMeter): string {
  const counters = encodeUsage(usage);
  for (const key of Object.keys(counters)) if (counters[key] === 0) delete counters[key];
  return toJson({ ...counters, ...encodeMeter(meter) });
}
