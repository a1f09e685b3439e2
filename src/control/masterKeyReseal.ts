import { type Clock, systemClock } from "../kernel/clock.js";
import { PlatformError } from "../kernel/errors.js";
import { SecretOpenError } from "../secrets/errors.js";
import type { SealedRecordRewrapper } from "../secrets/ports.js";
import { auditEntry } from "./adminAudit.js";
import type { SealedRevisionCursor, SealedRevisionStore } from "./vaultPorts.js";

export interface ResealProgress {
  /** Revisions re-sealed by this run so far. */
  resealed: number;
  /** Revisions found changed or gone when their turn came (re-sealed by another run, or deleted). */
  skipped: number;
  /** Revisions not under the current key when this run started. */
  total: number;
}

export interface ResealOptions {
  /** Revisions read per query (each is still re-sealed in its own transaction). Default 100. */
  batchSize?: number;
  /** Stop after this many re-sealed revisions (a partial run; run again to go on). */
  limit?: number;
  /** Stops between two revisions (Ctrl-C); what was re-sealed stays re-sealed. */
  signal?: AbortSignal;
  /** After every batch. */
  onProgress?: (progress: ResealProgress) => void;
  /** When each re-seal is recorded in the admin audit. Default: the system clock. */
  clock?: Clock;
}

export interface ResealReport extends ResealProgress {
  currentKeyId: string;
  /** Revisions per master key id before the run. */
  before: Map<string, number>;
  /** Revisions per master key id after the run. */
  after: Map<string, number>;
  /** Revisions still under another key than the current one (0: every retired key may go). */
  remaining: number;
  /** The run stopped early (signal or limit); nothing is wrong, run again to finish. */
  stoppedEarly: boolean;
}

/** The re-seal refused to start, or stopped at a revision it could not open. Nothing unsafe was done. */
export class ResealRefused extends PlatformError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("reseal_refused", message, options);
    this.name = "ResealRefused";
  }
}

/**
 * Step 2 of a master-key rotation: every stored credential revision sealed under another key than
 * the current one is re-sealed under the current key (same plaintext, a new data key, the identity
 * from its own row), each revision in its own transaction, compare-and-swap on the seal it read.
 *
 * - Fail closed: it refuses to start while any revision names a key this process does not hold
 *   (nothing changes), and stops at the first revision that does not open (`SecretOpenError`), so a
 *   tampered or foreign record is reported, never skipped over or re-sealed.
 * - Idempotent and resumable: revisions already under the current key are not touched, so running
 *   it again after an interruption (or twice) goes on where it stopped; two runs at once cannot both
 *   win a revision (the loser counts it as skipped).
 * Plaintext exists only inside `secrets/` (`SealedRecordRewrapper.rewrap`), zeroed per revision.
 */
export async function resealCredentialRevisions(
  store: SealedRevisionStore,
  keys: SealedRecordRewrapper,
  options: ResealOptions = {},
): Promise<ResealReport> {
  const batchSize = options.batchSize ?? 100;
  const current = keys.currentKeyId;
  const before = await store.countByMasterKey();
  const unknown = [...before].filter(([id]) => !keys.holdsKey(id));
  if (unknown.length > 0) {
    throw new ResealRefused(
      `${unknown.map(([id, n]) => `${n} revision(s) are sealed under master key ${id}`).join("; ")}, ` +
        "which this process does not hold. Nothing was changed. Supply that key as a retired key " +
        "(AWAKEN_MASTER_KEY_RETIRED or a <data-dir>/master.key.retired-* file) and run again.",
    );
  }
  const total = [...before].reduce((sum, [id, n]) => (id === current ? sum : sum + n), 0);
  const progress: ResealProgress = { resealed: 0, skipped: 0, total };
  let cursor: SealedRevisionCursor | null = null;
  let stoppedEarly = false;
  outer: for (;;) {
    const batch = await store.listSealedNotUnder(current, cursor, batchSize);
    if (batch.length === 0) break;
    for (const row of batch) {
      if (options.signal?.aborted || (options.limit !== undefined && progress.resealed >= options.limit)) {
        stoppedEarly = true;
        break outer;
      }
      const identity = {
        credentialId: row.credentialId,
        revision: row.revision,
        workspaceId: row.workspaceId,
      };
      if (!keys.holdsKey(row.sealed.masterKeyId)) {
        throw new ResealRefused(
          `credential ${row.credentialId} revision ${row.revision} (workspace ${row.workspaceId}) is sealed under ` +
            `master key ${row.sealed.masterKeyId}, which this process does not hold (written since the run ` +
            `started?). Stopped; ${progress.resealed} revision(s) were re-sealed. Supply that key and run again.`,
        );
      }
      let next: Awaited<ReturnType<SealedRecordRewrapper["rewrap"]>>;
      try {
        next = await keys.rewrap(identity, row.sealed);
      } catch (error) {
        if (!(error instanceof SecretOpenError)) throw error;
        throw new ResealRefused(
          `${error.message} (${error.reason}). Stopped there: a revision that does not open is never ` +
            `re-sealed. ${progress.resealed} revision(s) were re-sealed by this run; fix or delete that ` +
            "credential (or supply the key that sealed it) and run again.",
          { cause: error },
        );
      }
      // Audited as the local command (`cli`); the digests are of the seal's master key id, no secret.
      const audit = auditEntry(
        { workspaceId: row.workspaceId, actor: "cli" },
        {
          action: "reseal",
          resourceType: "credential",
          resourceId: row.credentialId,
          revision: row.revision,
          before: { masterKeyId: row.sealed.masterKeyId },
          after: { masterKeyId: next.masterKeyId },
          at: (options.clock ?? systemClock).now(),
        },
      );
      if (await store.replaceSealed(row, next, audit)) progress.resealed += 1;
      else progress.skipped += 1;
      cursor = { credentialId: row.credentialId, revision: row.revision };
    }
    options.onProgress?.({ ...progress });
  }
  const after = await store.countByMasterKey();
  const remaining = [...after].reduce((sum, [id, n]) => (id === current ? sum : sum + n), 0);
  return { ...progress, currentKeyId: current, before, after, remaining, stoppedEarly };
}
