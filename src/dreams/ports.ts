/**
 * The Dreams context: a dream reads a memory store and past sessions' transcripts and writes a
 * reorganized store through a model run. It has no executor of its own: its run is an internal
 * session's run on the workspace's dreamer agent (claimed, fenced and resumed like any run), and a
 * dream's status follows that session. What crosses the context's edge: the dream store port and
 * the ports Dreams uses to reach sessions and memory stores.
 */
import type { Page } from "../kernel/pagination.js";
import type { MemoryLimits } from "../resources/memory/memoryLimits.js";
import type { MemoryStoreRecord } from "../resources/memory/ports.js";

export type DreamStatus = "pending" | "running" | "completed" | "failed" | "canceled";
export const FINAL_DREAM_STATUSES: readonly DreamStatus[] = ["completed", "failed", "canceled"];

export type DreamInput =
  | { type: "memory_store"; memory_store_id: string }
  | { type: "sessions"; session_ids: string[] };

export type DreamOutputBehavior =
  | { type: "create_new" }
  /** Writes the result into the input store; one such dream per store until it ends. */
  | { type: "update_existing"; memory_store_id: string };

export interface DreamUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export interface DreamError {
  type: string;
  message: string;
}

export interface DreamRecord {
  id: string;
  workspaceId: string;
  status: DreamStatus;
  inputs: DreamInput[];
  instructions: string | null;
  model: { id: string; speed: "standard" };
  outputBehavior: DreamOutputBehavior;
  /** The store holding the result; set in the transaction that completes the dream. */
  outputStoreId: string | null;
  /** The internal session that runs the dream. */
  sessionId: string | null;
  error: DreamError | null;
  /** Frozen when the dream completes or fails (a canceled dream's session may still count). */
  usage: DreamUsage | null;
  createdAt: number;
  endedAt: number | null;
  archivedAt: number | null;
}

export interface DreamListQuery {
  limit: number;
  cursor: string | null;
  includeArchived: boolean;
  statuses: DreamStatus[] | null;
  createdAtGt: number | null;
  createdAtLt: number | null;
}

/** One memory of a dream's output store, ids made by the caller. */
export interface DreamOutputMemory {
  id: string;
  versionId: string;
  path: string;
  content: string;
}

/** Where a completed dream's memories go: a new store, or the input store they replace. */
export type DreamTarget = { kind: "new"; store: MemoryStoreRecord } | { kind: "existing"; storeId: string };

export interface DreamStore {
  /**
   * Writes the dream. An `update_existing` dream holds its store until it ends: while another
   * dream holds it, nothing is written and the holder's id is returned.
   */
  create(dream: DreamRecord): Promise<{ ok: true } | { ok: false; heldBy: string }>;
  /** The dream not yet ended that holds `storeId` for `update_existing`, or null. */
  holderOf(workspaceId: string, storeId: string): Promise<string | null>;
  get(workspaceId: string, id: string): Promise<DreamRecord | null>;
  /** Newest first (by id, which sorts by creation time). */
  list(workspaceId: string, query: DreamListQuery): Promise<Page<DreamRecord>>;
  /** `pending` → `running`; false if the dream was no longer pending. */
  markRunning(workspaceId: string, id: string): Promise<boolean>;
  /**
   * In ONE transaction: the dream `pending`/`running` → `completed` and its memories written: a new
   * store with all of them, or the input store made exactly them (memories whose path is gone are
   * deleted, changed ones modified, new ones created, each with its version). False, having written
   * nothing, when the dream had already ended (canceled, failed or completed by another caller): at
   * most one output is ever written. A target the memory store refuses (archived or deleted since,
   * full) fails the dream instead, writing no memory.
   */
  complete(
    workspaceId: string,
    id: string,
    output: { target: DreamTarget; memories: DreamOutputMemory[]; usage: DreamUsage },
    limits: MemoryLimits,
    now: number,
  ): Promise<boolean>;
  /** `pending`/`running` → `failed`; false if the dream had already ended. */
  fail(workspaceId: string, id: string, error: DreamError, usage: DreamUsage, now: number): Promise<boolean>;
  /** `pending`/`running` → `canceled`; false if the dream had already ended. */
  cancel(workspaceId: string, id: string, now: number): Promise<boolean>;
  /** Sets `archived_at` once (an archived dream keeps its first time). */
  archive(workspaceId: string, id: string, now: number): Promise<void>;
  /** Dreams not yet ended, oldest first, any workspace (the sweep that finishes unpolled dreams). */
  active(limit: number): Promise<Array<{ workspaceId: string; id: string }>>;
}
