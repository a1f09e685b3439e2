import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";

/** One row of the custody audit (`credential_opens`), as the remote-worker suites check it. */
export interface CredentialOpenRow {
  workspace_id: string;
  run_id: string;
  owner: string;
  epoch: number;
  credential_id: string;
  revision: number;
  holder: string;
  usage_key: string;
  outcome: string;
  reason: string | null;
}

/**
 * A session's audit rows in the order they were written, read beside a running server: from its
 * PostgreSQL schema when it has one, else from the SQLite file in its data dir (read-only).
 */
export async function credentialOpens(
  authority: { schemaUrl: string | null; dataDir: string },
  sessionId: string,
): Promise<CredentialOpenRow[]> {
  const query =
    "select workspace_id, run_id, owner, epoch, credential_id, revision, holder, usage_key, outcome, reason from credential_opens where session_id = $1 order by created_at, id";
  if (authority.schemaUrl) {
    const client = new pg.Client({ connectionString: authority.schemaUrl });
    await client.connect();
    try {
      const rows = (await client.query(query, [sessionId])).rows as CredentialOpenRow[];
      return rows.map((r) => ({ ...r, epoch: Number(r.epoch), revision: Number(r.revision) }));
    } finally {
      await client.end();
    }
  }
  const db = new SqliteDatabase(join(authority.dataDir, "awaken.db"), { readonly: true });
  try {
    return db.prepare(query.replace("$1", "?")).all(sessionId) as CredentialOpenRow[];
  } finally {
    db.close();
  }
}
