/** The committed history's table (coordinator), part of `Database` (schema.ts). */
export interface CommitTables {
  /**
   * One row per commit that appended facts to a thread (migration 028): its facts, the session
   * projection after them and what it was committed for (a fenced operation or a client's send).
   * Rows are never updated, except by the erasure of a data subject's content and the deletion of
   * a session. The facts of a row occupy versions (base_version, version]; the primary key
   * (thread_id, base_version) is the fence's version check (two commits cannot extend one version)
   * and its duplicate check (an operation's row is the one based at its expected version).
   */
  commits: {
    thread_id: string;
    base_version: number;
    version: number;
    session_id: string;
    /** JSON array of `[id, type, body]`, in version order (`encodeFacts`). */
    facts_json: string;
    created_at: number;
    /** The session projection after the facts; null only on rows migrated below a thread's head. */
    status: string | null;
    pending_json: string | null;
    usage_json: string | null;
    /** A fenced commit: its operation, the payload hash its retries must match and its settle. */
    op_id: string | null;
    run_id: string | null;
    payload_hash: string | null;
    settled: string | null;
    /** A client's send: the request's hash, its body's (an idempotency key's) and the echoed ids. */
    request_hash: string | null;
    body_hash: string | null;
    echo_json: string | null;
  };
}
