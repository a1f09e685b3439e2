import type { Kysely, Transaction } from "kysely";
import type { Database } from "./schema.js";

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
export type DbOrTx = Db | Tx;

export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

export function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** Cursors are opaque to clients: base64url of a small JSON position. */
export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString("base64url");
}

export function decodeCursor(cursor: string | null): Record<string, string | number> | null {
  if (!cursor) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (value && typeof value === "object" && !Array.isArray(value))
      return value as Record<string, string | number>;
  } catch {
    // fall through
  }
  return null;
}
