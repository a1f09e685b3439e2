import type { ConsentPurpose, ConsentRecord, ConsentStore } from "../../control/consent.js";
import type { Db } from "./db.js";

export class SqlConsentStore implements ConsentStore {
  constructor(private readonly db: Db) {}

  async set(
    workspaceId: string,
    subjectId: string,
    purpose: ConsentPurpose,
    granted: boolean,
    updatedBy: string,
    now: number,
  ): Promise<void> {
    const value = granted ? 1 : 0;
    await this.db
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
