import type { Kysely, Transaction } from "kysely";
import { invalid } from "../../kernel/errors.js";
import type { Database } from "./schema.js";

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
export type DbOrTx = Db | Tx;

/**
 * The backend a dialect-neutral store runs on. Most SQL is the same on both; what differs is
 * concurrency: SQLite has one writer at a time (no row locks, no `FOR UPDATE`), while PostgreSQL
 * runs transactions side by side, so the stores take row locks there.
 */
export type SqlDialect = "sqlite" | "postgres";

/**
 * Starts a transaction. On PostgreSQL it is explicitly READ COMMITTED: the stores lock the rows they
 * decide on (`FOR UPDATE`) and rely on every statement after the lock seeing the latest committed
 * rows. Under REPEATABLE READ or SERIALIZABLE (a server default someone may have set) a lock on a row
 * changed since the snapshot fails with a serialization error instead of waiting.
 */
export function begin(db: Db, dialect: SqlDialect) {
  const builder = db.transaction();
  return dialect === "postgres" ? builder.setIsolationLevel("read committed") : builder;
}

export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

export function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** Cursors are opaque to clients: base64url of a small JSON position. */
export function encodeCursor(list: string, position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify({ ...position, list })).toString("base64url");
}

/** Positions compared with integer columns (sequence numbers, versions, revisions, times in ms). */
const INTEGER_POSITIONS: ReadonlySet<string> = new Set(["seq", "version", "revision", "at"]);

/**
 * A value a cursor may hold under `key`. A client can forge a cursor, and PostgreSQL refuses what
 * SQLite compares quietly (a NUL in text; `1.5`, `1e300` or a string against a bigint), as a 500.
 */
function isPositionValue([key, value]: [string, unknown]): boolean {
  if (INTEGER_POSITIONS.has(key)) return Number.isSafeInteger(value);
  return typeof value === "string" && !value.includes("\0");
}

/**
 * Reads a cursor this list produced. A cursor that does not decode, or that another list produced
 * (its `list` tag differs), is a client error: silently restarting from page one would repeat data.
 */
export function decodeCursor(list: string, cursor: string | null): Record<string, string | number> | null {
  if (!cursor) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = null;
  }
  if (
    !value ||
    typeof value !== "object" ||
    Array.isArray(value) ||
    (value as { list?: unknown }).list !== list ||
    !Object.entries(value).every(isPositionValue)
  ) {
    throw invalid(
      "page: not a cursor returned by this list; pass the next_page (or prev_page) value unchanged",
    );
  }
  return value as Record<string, string | number>;
}
