import type { Db } from "./db.js";

/** The names of `installation_facts` rows. */
export type InstallationFact = "master_key_id" | "bootstrap_api_key";

/**
 * Facts every process on one database must agree on. `claim` is first-writer-wins on both
 * backends (an insert that does nothing on conflict, then a read), so replicas starting at the
 * same moment still end up with one value.
 */
export class SqlInstallationFacts {
  constructor(private readonly db: Db) {}

  async get(name: InstallationFact): Promise<string | null> {
    const row = await this.db
      .selectFrom("installation_facts")
      .select("value")
      .where("name", "=", name)
      .executeTakeFirst();
    return row?.value ?? null;
  }

  /** Records `value` unless the fact exists; returns the fact's value either way. */
  async claim(name: InstallationFact, value: string, now: number): Promise<string> {
    await this.db
      .insertInto("installation_facts")
      .values({ name, value, recorded_at: now })
      .onConflict((oc) => oc.column("name").doNothing())
      .execute();
    const recorded = await this.get(name);
    if (recorded === null) throw new Error(`installation fact ${name} vanished right after it was recorded`);
    return recorded;
  }

  /** Moves the fact from `from` to `to`; false when it no longer holds `from`. */
  async replace(name: InstallationFact, from: string, to: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable("installation_facts")
      .set({ value: to, recorded_at: now })
      .where("name", "=", name)
      .where("value", "=", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Every master key id some stored credential revision is sealed under. */
  async sealedMasterKeyIds(): Promise<string[]> {
    const rows = await this.db
      .selectFrom("vault_credential_revisions")
      .select("master_key_id")
      .distinct()
      .orderBy("master_key_id")
      .execute();
    return rows.map((r) => r.master_key_id);
  }
}
