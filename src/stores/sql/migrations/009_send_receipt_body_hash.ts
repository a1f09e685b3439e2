import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// A send under an `Idempotency-Key` is remembered by the key's hash; this column adds the hash of
// the body it came with, so the same key with another body is refused instead of answered with
// the first echo. Null on receipts written before it (and on keyless retries, whose request hash
// already is the body's): such a receipt is answered as before.
export const sendReceiptBodyHash: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("send_receipts").addColumn("body_hash", "text").execute();
  },
};
