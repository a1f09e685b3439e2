import { type AdminAuditEntry, auditEntry } from "../control/adminAudit.js";
import { AwakenError, invalid } from "../kernel/errors.js";
import type { JsonObject } from "../kernel/json.js";
import { decodeFact, encodeFact } from "./factCodec.js";
import type { Fact } from "./facts.js";
import type { ContentBlock, TypedFact } from "./factVocabulary.js";

/**
 * Data subjects: the end user a session is about, named by the client at creation, and the erasure
 * of that subject's captured content. The subject id is opaque: the product never interprets it.
 */

/** The session metadata key that names the subject (an official-SDK client can send metadata). */
export const DATA_SUBJECT_METADATA_KEY = "awaken_data_subject";

/**
 * 1–128 characters of letters, digits and `_ - . : @`, starting with a letter or digit: an opaque id
 * that is safe as one URL path segment (no `/`, `?`, `#`, `%`, no `.` or `..` segment) and in logs.
 */
const SUBJECT_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;

export function isDataSubjectId(value: string): boolean {
  return SUBJECT_ID.test(value);
}

export function assertDataSubjectId(value: string, field: string): string {
  if (!isDataSubjectId(value))
    throw invalid(
      `${field}: expected a data subject id of 1-128 letters, digits, "_", "-", ".", ":" or "@", starting with a letter or digit`,
    );
  return value;
}

/** The subject a session's metadata names, validated; null when it names none. */
export function dataSubjectOf(metadata: Record<string, string>): string | null {
  const value = metadata[DATA_SUBJECT_METADATA_KEY];
  if (value === undefined) return null;
  return assertDataSubjectId(value, `metadata[${JSON.stringify(DATA_SUBJECT_METADATA_KEY)}]`);
}

/** What stands where erased content was: one text block, so every projection shows it as text. */
export const ERASED_TEXT = "[erased]";
const ERASED_BLOCKS: ContentBlock[] = [{ type: "text", text: ERASED_TEXT }];
/** A tombstoned tool input: an object (inputs are objects on every wire) that says what happened. */
const ERASED_INPUT: JsonObject = { erased: true };

const isErased = (blocks: ContentBlock[]) =>
  blocks.length === 1 && blocks[0]?.type === "text" && blocks[0]?.text === ERASED_TEXT;

/**
 * The fact with its captured content replaced by the tombstone, keeping its id, kind and every
 * non-content field (call ids, executors, verdicts, flags); null when it carries no content to erase
 * (already tombstoned, or a kind without content). Internal and unknown facts are runtime
 * bookkeeping (ids, attempts) and are kept.
 */
export function tombstoneOf(fact: TypedFact): TypedFact | null {
  switch (fact.kind) {
    case "user_message": {
      // A UI client's metadata is the client's content too: erased with the text.
      if (isErased(fact.content) && fact.clientMetadata === undefined) return null;
      const { clientMetadata: _dropped, ...kept } = fact;
      return { ...kept, content: ERASED_BLOCKS };
    }
    case "system_message":
    case "agent_message":
    // What one agent told another is the subject's content as much as what it told the user.
    case "thread_message_sent":
    case "thread_message_received":
      return isErased(fact.content) ? null : { ...fact, content: ERASED_BLOCKS };
    case "tool_call": {
      const input = fact.call.input;
      if (Object.keys(input).length === 1 && input.erased === true) return null;
      return { ...fact, call: { ...fact.call, input: ERASED_INPUT } };
    }
    case "tool_result":
      // A result the client sent without content keeps that shape: there is nothing to erase.
      if (fact.unset?.includes("content") || isErased(fact.content)) return null;
      return { ...fact, content: ERASED_BLOCKS };
    case "tool_confirmation":
      return fact.denyMessage === null || fact.denyMessage === ERASED_TEXT
        ? null
        : { ...fact, denyMessage: ERASED_TEXT };
    case "outcome_defined":
      // The task and its rubric are the client's words; the outcome's ids and budget stay.
      return fact.description === ERASED_TEXT && fact.rubric.content === ERASED_TEXT
        ? null
        : { ...fact, description: ERASED_TEXT, rubric: { ...fact.rubric, content: ERASED_TEXT } };
    case "outcome_evaluation_end":
      // A grader's explanation quotes the attempt it judged.
      return fact.explanation === ERASED_TEXT ? null : { ...fact, explanation: ERASED_TEXT };
    case "context_compacted":
      // The summary retells the subject's conversation: it goes with it.
      return fact.summary === ERASED_TEXT ? null : { ...fact, summary: ERASED_TEXT };
    case "workflow_run": {
      // A run's and its phases' names and descriptions are the agent's words about the task.
      const change = fact.change;
      if (change.type !== "created") return null;
      const erasedText = (value: string | null) => (value === null ? null : ERASED_TEXT);
      const erased = {
        ...change,
        name: ERASED_TEXT,
        description: erasedText(change.description),
        phases: change.phases.map((p) => ({
          ...p,
          name: ERASED_TEXT,
          description: erasedText(p.description),
        })),
      };
      return JSON.stringify(erased) === JSON.stringify(change) ? null : { ...fact, change: erased };
    }
    case "session_updated": {
      const title = fact.changes.title;
      return typeof title === "string" && title !== ERASED_TEXT
        ? { ...fact, changes: { ...fact.changes, title: ERASED_TEXT } }
        : null;
    }
    default:
      return null;
  }
}

/** The stored fact tombstoned through the codec (so it still decodes), or null when nothing changes. */
export function tombstoneStored<F extends Fact>(fact: F): F | null {
  const tombstone = tombstoneOf(decodeFact(fact));
  if (!tombstone) return null;
  const { type, body } = encodeFact(tombstone);
  return { ...fact, type, body };
}

/** What one erasure removed, per kind of copy. All zero: the subject had nothing left to erase. */
export interface ErasureCounts {
  sessions: number;
  /** History facts whose content was replaced by a tombstone. */
  facts: number;
  /** Session titles cleared. */
  titles: number;
  /** Send receipts (idempotent-retry echoes) whose copies were tombstoned. */
  sendReceipts: number;
  /** Webhook notification bodies (A2A push) holding copies, deleted. */
  pushNotifications: number;
}

export interface ErasureReceipt {
  id: string;
  workspaceId: string;
  subjectId: string;
  counts: ErasureCounts;
  /** False when nothing was left to erase (a repeated erasure). */
  removed: boolean;
  createdAt: number;
  /** What became of the erased sessions' sandbox workspaces: said in the erasure's answer only. */
  workspaces?: WorkspaceErasure;
  /** How the database's old row versions were reclaimed: said in the erasure's answer only. */
  vacuum?: ErasureVacuumOutcome;
}

/**
 * What became of the erased sessions' sandbox workspaces, which hold whatever the agent wrote
 * there (a later turn could read it back into the history). Deleted, as a session's deletion does.
 */
export interface WorkspaceErasure {
  /** Workspaces deleted from this server's host (its in-process workers'). */
  removed: number;
  /** Found on this host and not deleted (an error, logged): a repeated erasure tries again. */
  failed: number;
  /**
   * Erased sessions whose workspaces, if they have any, would be on other hosts, which this server
   * does not reach (it serves remote workers, has no in-process workers, or shares its PostgreSQL
   * database with replicas whose in-process workers may hold them). Such a
   * worker deletes the workspace when it next claims the session, before any tool runs (a claim
   * carries `workspaceErasedAt`): until then it stays on that host.
   */
  notReached: number;
}

/** Deletes erased sessions' workspaces where this process can (its host's sandboxes). */
export interface ErasedSessionWorkspaces {
  erase(sessionIds: string[]): Promise<WorkspaceErasure>;
}

/**
 * How an erasure reclaims the old versions of the rows it rewrote (PostgreSQL keeps them in the
 * table's files as dead tuples): `full` rewrites the tables (VACUUM FULL: the bytes leave the live
 * files, and every read and write of those tables waits for the rewrite), `plain` vacuums them
 * (the space is marked reusable, the bytes stay until overwritten), `off` leaves it to autovacuum.
 */
export type ErasureVacuum = "off" | "plain" | "full";
const ERASURE_VACUUM_ENV = "AWAKEN_ERASURE_VACUUM";

/**
 * The operator's choice (`AWAKEN_ERASURE_VACUUM`, default `plain`): `full` is never the default,
 * because a workspace's admin would then hold every tenant's reads and writes of those tables
 * for a rewrite, each time they erase.
 */
export function erasureVacuumFromEnv(env: NodeJS.ProcessEnv): ErasureVacuum {
  const value = env[ERASURE_VACUUM_ENV];
  if (value === undefined || value === "") return "plain";
  if (value === "off" || value === "plain" || value === "full") return value;
  throw new Error(
    `${ERASURE_VACUUM_ENV} must be off, plain or full (default plain), got ${JSON.stringify(value)}`,
  );
}
/**
 * What was done: the mode; `failed` (logged; the erasure itself stands); `not_needed` (nothing
 * was rewritten); `not_applicable` (SQLite: see the operations notes for its file).
 */
export type ErasureVacuumOutcome = ErasureVacuum | "failed" | "not_needed" | "not_applicable";

/**
 * Erases a subject's captured content in one workspace, in one transaction, and records the
 * receipt in the same transaction. Refuses (`data_subject_busy`, nothing written) while one of the
 * subject's sessions has a run queued or executing.
 */
export interface SubjectErasureStore {
  /** The receipt, and the ids of the subject's sessions (whose workspaces go next). */
  erase(request: {
    workspaceId: string;
    subjectId: string;
    id: string;
    requestedBy: string;
    now: number;
    /** The admin audit's entry for what was removed, committed with the erasure when it removed anything. */
    audit: (counts: ErasureCounts) => AdminAuditEntry;
  }): Promise<{ receipt: ErasureReceipt; sessionIds: string[] }>;
  /**
   * Reclaims the dead row versions an erasure left in the tables it rewrote, outside its
   * transaction (VACUUM cannot run in one). Rejects when the database refused (a lock not had in time).
   */
  vacuum(mode: ErasureVacuum): Promise<ErasureVacuumOutcome>;
  /** When the subject's latest erasure was recorded (ms), or null: never erased. */
  lastErasedAt(workspaceId: string, subjectId: string): Promise<number | null>;
  /** The erasures recorded for a subject, newest first. */
  listErasures(workspaceId: string, subjectId: string): Promise<ErasureReceipt[]>;
}

export function subjectBusy(): AwakenError {
  return new AwakenError(
    "data_subject_busy",
    "a session of this data subject has a run queued or executing; wait for it to go idle (or interrupt it) and repeat the erasure",
    // On the wire as `error.details.error_code`: a client tells this 409 from the others by it.
    { details: { error_code: "data_subject_busy" } },
  );
}

/** The erasure adapter's application port: validates the request and names the receipt. */
export class SubjectErasureService {
  constructor(
    private readonly store: SubjectErasureStore,
    private readonly now: () => number,
    private readonly newReceiptId: (now: number) => string,
    private readonly after: {
      /** Where the erased sessions' workspaces are deleted; absent: this process holds none. */
      workspaces?: ErasedSessionWorkspaces;
      vacuum?: ErasureVacuum;
      /** Told what could not be reclaimed (never content): the erasure itself stands. */
      warn?: (message: string, error: unknown) => void;
    } = {},
  ) {}

  /**
   * Erases the subject's captured content in `workspaceId` only, then what the rows do not hold:
   * the sessions' workspaces, and the database's old row versions. Repeating it removes nothing
   * more from the database and retries the rest.
   */
  async erase(workspaceId: string, subjectId: string, requestedBy: string): Promise<ErasureReceipt> {
    const { receipt, sessionIds } = await this.eraseRows(workspaceId, subjectId, requestedBy);
    const workspaces = (await this.after.workspaces?.erase(sessionIds)) ?? {
      removed: 0,
      failed: 0,
      notReached: sessionIds.length,
    };
    // A repeat that rewrote nothing left nothing to reclaim (and must not rewrite tables again).
    const vacuum = receipt.removed
      ? await this.store.vacuum(this.after.vacuum ?? "plain").catch((error: unknown) => {
          this.after.warn?.("could not vacuum the tables an erasure rewrote", error);
          return "failed" as const;
        })
      : "not_needed";
    return { ...receipt, workspaces, vacuum };
  }

  private eraseRows(workspaceId: string, subjectId: string, requestedBy: string) {
    assertDataSubjectId(subjectId, "subject_id");
    const now = this.now();
    const audit = (counts: ErasureCounts) =>
      auditEntry(
        { workspaceId, actor: requestedBy },
        {
          action: "erase",
          resourceType: "data_subject",
          resourceId: subjectId,
          before: null,
          after: counts,
          at: now,
        },
      );
    return this.store.erase({ workspaceId, subjectId, id: this.newReceiptId(now), requestedBy, now, audit });
  }

  listErasures(workspaceId: string, subjectId: string): Promise<ErasureReceipt[]> {
    assertDataSubjectId(subjectId, "subject_id");
    return this.store.listErasures(workspaceId, subjectId);
  }
}
