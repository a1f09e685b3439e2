import type { Page } from "../../kernel/pagination.js";
import type { SessionResourceRecord } from "../ports.js";

/** The SessionResource family's store port (its SQL implementation lives in stores/sql). */
export interface SessionResourceStore {
  readonly family: "sessionResources";
  /** Whether the session exists in the workspace (not deleted): another workspace's reads as absent. */
  sessionExists(workspaceId: string, sessionId: string): Promise<boolean>;
  /**
   * Adds one resource, with the session's count and mount checks in the same transaction: false (and
   * nothing written) when the session is gone; throws the conflict `check` names otherwise.
   */
  add(
    record: SessionResourceRecord,
    check: (existing: readonly SessionResourceRecord[]) => void,
  ): Promise<boolean>;
  get(workspaceId: string, sessionId: string, id: string): Promise<SessionResourceRecord | null>;
  /** A memory store resource by its store's id (it has no id of its own on the wire). */
  getByMemoryStore(
    workspaceId: string,
    sessionId: string,
    memoryStoreId: string,
  ): Promise<SessionResourceRecord | null>;
  /** One page in creation order (ids sort by time). */
  list(
    workspaceId: string,
    sessionId: string,
    query: { limit: number; cursor: string | null },
  ): Promise<Page<SessionResourceRecord>>;
  /** Every resource of each session named, in creation order (a session page's `resources`). */
  listAll(workspaceId: string, sessionIds: readonly string[]): Promise<Map<string, SessionResourceRecord[]>>;
  /** Replaces a repository's sealed token at the next revision; false when it is gone. */
  rotateToken(
    workspaceId: string,
    sessionId: string,
    id: string,
    sealedToken: string,
    tokenRevision: number,
    now: number,
  ): Promise<boolean>;
  delete(workspaceId: string, sessionId: string, id: string): Promise<boolean>;
}
