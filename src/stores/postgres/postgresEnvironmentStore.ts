import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { EnvironmentRecord } from "../../coordinator/ports.js";
import { BoundedCache } from "../../kernel/boundedCache.js";
import type { Clock } from "../../kernel/clock.js";
import type { Db } from "../sql/db.js";
import { SqlEnvironmentStore } from "../sql/sqlEnvironmentStore.js";

/** Environments a replica starts sessions on at once: a bound on memory, not a working size. */
const MAX_ENTRIES = 1_000;
/** How long an environment read once serves new sessions without a read of its own. */
const TTL_MS = 60_000;

/**
 * Environments on PostgreSQL, with the environment a new session pins known without reading it
 * when this process read it lately (`pinnedForSession`). Only a help: the session's insert checks
 * that the pinned revision is still the newest of a live environment (`PostgresSessionStore`), and
 * a session whose pin moved starts again on a fresh read. Reads for clients always read.
 */
export class PostgresEnvironmentStore extends SqlEnvironmentStore {
  private readonly known: BoundedCache<string, EnvironmentRecord>;

  constructor(db: Db, clock: Clock) {
    super(db);
    this.known = new BoundedCache({ maxEntries: MAX_ENTRIES, ttlMs: TTL_MS, clock });
  }

  override async get(workspaceId: string, id: string): Promise<EnvironmentRecord | null> {
    const record = await super.get(workspaceId, id);
    if (record) this.known.set(key(workspaceId, id), record);
    else this.known.delete(key(workspaceId, id));
    return record;
  }

  async pinnedForSession(workspaceId: string, id: string): Promise<EnvironmentRecord | null> {
    return this.known.get(key(workspaceId, id)) ?? this.get(workspaceId, id);
  }

  override async create(record: EnvironmentRecord, audit: AdminAuditEntry): Promise<void> {
    this.known.delete(key(record.workspaceId, record.id));
    await super.create(record, audit);
  }

  override async update(
    record: EnvironmentRecord,
    newRevision: boolean,
    audit: AdminAuditEntry,
  ): Promise<boolean> {
    this.known.delete(key(record.workspaceId, record.id));
    return super.update(record, newRevision, audit);
  }

  override async delete(workspaceId: string, id: string, audit: AdminAuditEntry): Promise<boolean> {
    this.known.delete(key(workspaceId, id));
    return super.delete(workspaceId, id, audit);
  }
}

const key = (workspaceId: string, id: string) => `${workspaceId}\u0000${id}`;
