import { newId } from "../../kernel/ids.js";
import { memoryPathProblem } from "../../resources/memory/memoryPaths.js";
import type { MemoryAuthor, MemoryWriteLimits, MemoryWriteRefusal } from "../../resources/memory/ports.js";
import {
  type MemoryChange,
  type MemoryChangeOutcome,
  type ResourceClaim,
  ResourceClaimLostError,
} from "../../resources/ports.js";
import type { SqlDialect, Tx } from "./db.js";
import { applyCreate, applyDelete, applyUpdate, lockStore } from "./memoryWrites.js";

// A run's memory changes, written back under its claim (see `MemoryStore.writeBackUnderClaim`).

/**
 * Throws unless `claim` names a run this owner holds at this epoch with an unexpired lease, of a
 * session of the claim's workspace. On PostgreSQL the run row stays share-locked until the
 * transaction ends, so a reclaim (which updates that row) waits for the write-back or goes first.
 */
async function checkClaim(tx: Tx, dialect: SqlDialect, claim: ResourceClaim, now: number): Promise<void> {
  let query = tx
    .selectFrom("runs")
    .select(["id"])
    .where("id", "=", claim.runId)
    .where("session_id", "=", claim.sessionId)
    .where("owner", "=", claim.owner)
    .where("epoch", "=", claim.epoch)
    .where("state", "=", "claimed")
    .where("lease_expires_at", ">", now);
  if (dialect === "postgres") query = query.forShare();
  if (!(await query.executeTakeFirst())) {
    throw new ResourceClaimLostError(`run ${claim.runId} is not held by this owner at epoch ${claim.epoch}`);
  }
  const session = await tx
    .selectFrom("sessions")
    .select(["id"])
    .where("id", "=", claim.sessionId)
    .where("workspace_id", "=", claim.workspaceId)
    .executeTakeFirst();
  if (!session)
    throw new ResourceClaimLostError(`session ${claim.sessionId} is not in the claim's workspace`);
}

export async function writeBackUnderClaim(
  tx: Tx,
  dialect: SqlDialect,
  claim: ResourceClaim,
  memoryStoreId: string,
  changes: MemoryChange[],
  limits: MemoryWriteLimits,
  now: number,
): Promise<MemoryChangeOutcome[]> {
  await checkClaim(tx, dialect, claim, now);
  const store = await lockStore(tx, dialect, claim.workspaceId, memoryStoreId);
  if (!store || store.archivedAt !== null) {
    const reason = store ? "the memory store is archived (read-only)" : "the memory store no longer exists";
    return changes.map((change) => ({ path: change.path, outcome: "refused", reason }));
  }
  const author: MemoryAuthor = { type: "session_actor", sessionId: claim.sessionId, runId: claim.runId };
  const outcomes: MemoryChangeOutcome[] = [];
  // In order: a later change sees an earlier one (delete /a, then create /a/b).
  for (const change of changes) {
    const wirePath = `/${change.path}`;
    const badPath = memoryPathProblem(wirePath);
    if (badPath) {
      outcomes.push({ path: change.path, outcome: "refused", reason: `path ${badPath}` });
      continue;
    }
    if (change.kind !== "delete") {
      const size = Buffer.byteLength(change.content, "utf8");
      if (size > limits.maxContentBytes) {
        outcomes.push({
          path: change.path,
          outcome: "refused",
          reason: `content is ${size} bytes; at most ${limits.maxContentBytes} are accepted`,
        });
        continue;
      }
    }
    const versionId = newId("memver", now);
    const result =
      change.kind === "create"
        ? await applyCreate(
            tx,
            store,
            { id: newId("mem", now), versionId, path: wirePath, content: change.content, author },
            limits,
            now,
          )
        : change.kind === "update"
          ? await applyUpdate(
              tx,
              store,
              change.memoryId,
              {
                versionId,
                path: wirePath,
                content: change.content,
                expectedContentSha256: change.expectedContentSha256,
                author,
              },
              now,
            )
          : await applyDelete(
              tx,
              store,
              change.memoryId,
              { versionId, expectedContentSha256: change.expectedContentSha256, author },
              now,
            );
    if (!result.ok) {
      outcomes.push(refusalOutcome(change.path, result.refusal));
    } else if (change.kind === "delete") {
      outcomes.push({ path: change.path, outcome: "deleted", memoryId: result.memory.id, versionId });
    } else {
      outcomes.push({
        path: change.path,
        outcome: "written",
        memoryId: result.memory.id,
        // An update that changed nothing keeps the memory's current version.
        versionId: result.memory.memoryVersionId,
        contentSha256: result.memory.contentSha256,
      });
    }
  }
  return outcomes;
}

function refusalOutcome(path: string, refusal: MemoryWriteRefusal): MemoryChangeOutcome {
  switch (refusal.kind) {
    case "precondition_failed":
      return {
        path,
        outcome: "conflict",
        reason: "the memory changed since it was read; nothing was written",
      };
    case "memory_not_found":
      return { path, outcome: "conflict", reason: "the memory was deleted since it was read" };
    case "path_conflict":
      return {
        path,
        outcome: "conflict",
        reason: `the path is taken by, or overlaps, memory ${refusal.conflictingMemoryId} at ${refusal.conflictingPath}`,
      };
    case "store_full":
      return {
        path,
        outcome: "refused",
        reason: `the memory store holds its limit of ${refusal.limit} memories`,
      };
    case "store_archived":
      return { path, outcome: "refused", reason: "the memory store is archived (read-only)" };
    case "store_not_found":
      return { path, outcome: "refused", reason: "the memory store no longer exists" };
  }
}
