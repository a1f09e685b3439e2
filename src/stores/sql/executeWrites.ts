import { writeFactAppend } from "./appendFacts.js";
import type { CommitWrites } from "./commitWrites.js";
import type { Tx } from "./db.js";
import type { InputWrites } from "./inputWrites.js";
import type { RunUpdate } from "./runWrites.js";

/** The write plans (`inputWrites.ts`, `commitWrites.ts`, `runWrites.ts`) executed with Kysely. */
export async function executeInputWrites(tx: Tx, sessionId: string, writes: InputWrites): Promise<void> {
  await writeFactAppend(tx, writes.facts);
  if (writes.session)
    await tx.updateTable("sessions").set(writes.session).where("id", "=", sessionId).execute();
  if (writes.runs.inserts.length > 0) await tx.insertInto("runs").values(writes.runs.inserts).execute();
  if (writes.runs.update) await executeRunUpdate(tx, writes.runs.update);
  const receipt = writes.receipt;
  if (receipt) {
    const { session_id: _, ...columns } = receipt;
    await tx
      .insertInto("send_receipts")
      .values(receipt)
      .onConflict((oc) => oc.column("session_id").doUpdateSet(columns))
      .execute();
  }
}

export async function executeCommitWrites(tx: Tx, sessionId: string, writes: CommitWrites): Promise<void> {
  await writeFactAppend(tx, writes.facts);
  if (writes.session)
    await tx.updateTable("sessions").set(writes.session).where("id", "=", sessionId).execute();
  if (writes.run) await executeRunUpdate(tx, writes.run);
  await tx.insertInto("commit_operations").values(writes.operation).execute();
}

/** One run UPDATE; false when its WHERE matched no row. */
export async function executeRunUpdate(tx: Tx, update: RunUpdate): Promise<boolean> {
  const result = await tx
    .updateTable("runs")
    .set(update.set)
    .where("id", "=", update.id)
    .$if(update.onlyIfCrashed, (q) => q.where("crash_count", "<>", 0))
    .$if(update.ifEpoch !== null, (q) => q.where("epoch", "=", update.ifEpoch ?? 0))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
