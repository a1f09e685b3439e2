import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { ConsentPurpose, ConsentRecord, ConsentStore } from "../../control/consent.js";
import type { Db } from "./db.js";
import { writeAudit } from "./sqlAdminAudit.js";

export class SqlConsentStore implements ConsentStore {
  constructor(private readonly db: Db) {}

  async set(
    workspaceId: string,
    subjectId: string,
    purpose: ConsentPurpose,
    granted: boolean,
    updatedBy: string,
    now: number,
    audit: AdminAuditEntry,
  ): Promise<void> {
    const value = granted ? 1 : 0;
    await this.db.transaction().execute(async (tx) => {
      await tx
        .insertInto("data_subject_consents")
        .values({
          workspace_id: workspaceId,
          subject_id: subjectId,
          purpose,
          granted: value,
          updated_by: updatedBy,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc
            .columns(["workspace_id", "subject_id", "purpose"])
            .doUpdateSet({ granted: value, updated_by: updatedBy, updated_at: now }),
        )
        .execute();
      await writeAudit(tx, audit);
    });
  }

  async list(workspaceId: string, subjectId: string): Promise<ConsentRecord[]> {
    const rows = await this.db
      .selectFrom("data_subject_consents")
      .select(["purpose", "granted", "updated_at"])
      .where("workspace_id", "=", workspaceId)
      .where("subject_id", "=", subjectId)
      .orderBy("purpose")
      .execute();
    return rows.map((r) => ({
      purpose: r.purpose as ConsentPurpose,
      granted: Number(r.granted) === 1,
      updatedAt: Number(r.updated_at),
    }));
  }
}
