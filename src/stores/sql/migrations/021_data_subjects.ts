import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Data subjects: the end user a session names (null: none), the erasures done for a subject (the
// audit: who asked, when, what was removed; no content), and Control's consent per subject and
// purpose. Same conventions as 001.
export const dataSubjects: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("sessions").addColumn("data_subject", "text").execute();
    await db.schema
      .createIndex("sessions_data_subject")
      .on("sessions")
      .columns(["workspace_id", "data_subject"])
      .execute();
    await db.schema
      .createTable("data_subject_erasures")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("subject_id", "text", (c) => c.notNull())
      .addColumn("requested_by", "text", (c) => c.notNull())
      .addColumn("counts_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("data_subject_erasures_subject")
      .on("data_subject_erasures")
      .columns(["workspace_id", "subject_id", "created_at"])
      .execute();
    await db.schema
      .createTable("data_subject_consents")
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("subject_id", "text", (c) => c.notNull())
      .addColumn("purpose", "text", (c) => c.notNull())
      .addColumn("granted", "integer", (c) => c.notNull())
      .addColumn("updated_by", "text", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("data_subject_consents_pk", ["workspace_id", "subject_id", "purpose"])
      .execute();
  },
};
