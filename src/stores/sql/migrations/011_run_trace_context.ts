import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// The W3C trace context (`traceparent`[ `tracestate`]) of the input that last started or resumed a
// run, written with the run in the input's transaction and returned by the claim, so the worker's
// spans continue the client's trace on any process, after any restart. Null when tracing was off.
export const runTraceContext: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("runs").addColumn("trace_context", "text").execute();
  },
};
