import type { CommittedFact, Fact } from "../../coordinator/facts.js";
import type { InputContext, InputLedger, InputPlan } from "../../coordinator/ports.js";
import { notFound } from "../../kernel/errors.js";
import { appendFacts } from "./appendFacts.js";
import type { Db } from "./db.js";
import { rowToSession } from "./sessionRows.js";

export const ACTIVE_RUN_STATES = ["queued", "claimed", "awaiting"] as const;

export class SqlInputLedger implements InputLedger {
  constructor(private readonly db: Db) {}

  async append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
  ): Promise<{ committed: CommittedFact[]; plan: InputPlan }> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom("sessions")
        .selectAll()
        .where("id", "=", sessionId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (!row) throw notFound("session", sessionId);
      const session = rowToSession(row);
      const run = await tx
        .selectFrom("runs")
        .select(["id", "state", "epoch"])
        .where("session_id", "=", sessionId)
        .where("state", "in", [...ACTIVE_RUN_STATES])
        .orderBy("created_at", "desc")
        .executeTakeFirst();
      const activeRun = run ? { id: run.id, state: run.state, epoch: Number(run.epoch) } : null;
      const plan = decide({ session, activeRun });
      const thread = await tx
        .selectFrom("threads")
        .select("version")
        .where("id", "=", session.threadId)
        .executeTakeFirstOrThrow();
      const committed = await appendFacts(tx, sessionId, session.threadId, Number(thread.version), plan.facts, now);
      const effect = plan.effect;
      if (effect.kind === "start") {
        await tx
          .insertInto("runs")
          .values({
            id: effect.runId,
            session_id: sessionId,
            thread_id: session.threadId,
            state: "queued",
            owner: null,
            epoch: 0,
            lease_expires_at: null,
            available_at: now,
            crash_count: 0,
            created_at: now,
            updated_at: now,
          })
          .execute();
      } else if (effect.kind === "resume" && activeRun) {
        await tx
          .updateTable("runs")
          .set({ state: "queued", available_at: now, updated_at: now })
          .where("id", "=", activeRun.id)
          .where("state", "=", "awaiting")
          .execute();
      } else if (effect.kind === "cancel" && activeRun) {
        // Advancing the epoch fences off whichever worker holds the claim: its next commit or
        // settle is stale and rejected.
        await tx
          .updateTable("runs")
          .set({ state: "cancelled", epoch: activeRun.epoch + 1, owner: null, lease_expires_at: null, updated_at: now })
          .where("id", "=", activeRun.id)
          .execute();
      }
      return { committed, plan };
    });
  }

  async lastSend(sessionId: string, requestHash: string): Promise<string | null> {
    const row = await this.db
      .selectFrom("send_receipts")
      .select(["request_hash", "response_json"])
      .where("session_id", "=", sessionId)
      .executeTakeFirst();
    return row && row.request_hash === requestHash ? row.response_json : null;
  }

  async rememberSend(sessionId: string, requestHash: string, responseJson: string, now: number): Promise<void> {
    await this.db
      .insertInto("send_receipts")
      .values({ session_id: sessionId, request_hash: requestHash, response_json: responseJson, created_at: now })
      .onConflict((oc) =>
        oc.column("session_id").doUpdateSet({ request_hash: requestHash, response_json: responseJson, created_at: now }),
      )
      .execute();
  }

  async deleteSession(sessionId: string, deletedFact: Fact, now: number): Promise<CommittedFact | null> {
    return this.db.transaction().execute(async (tx) => {
      const session = await tx
        .selectFrom("sessions")
        .select(["thread_id"])
        .where("id", "=", sessionId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (!session) return null;
      const thread = await tx
        .selectFrom("threads")
        .select("version")
        .where("id", "=", session.thread_id)
        .executeTakeFirstOrThrow();
      const [committed] = await appendFacts(tx, sessionId, session.thread_id, Number(thread.version), [deletedFact], now);
      await tx
        .deleteFrom("events")
        .where("thread_id", "=", session.thread_id)
        .where("id", "!=", deletedFact.id)
        .execute();
      await tx
        .updateTable("runs")
        .set((eb) => ({
          state: "cancelled",
          epoch: eb("epoch", "+", 1),
          owner: null,
          lease_expires_at: null,
          updated_at: now,
        }))
        .where("session_id", "=", sessionId)
        .where("state", "in", [...ACTIVE_RUN_STATES])
        .execute();
      await tx.deleteFrom("send_receipts").where("session_id", "=", sessionId).execute();
      await tx
        .updateTable("sessions")
        .set({ deleted_at: now, metadata_json: "{}", title: null, resources_json: "[]" })
        .where("id", "=", sessionId)
        .execute();
      return committed ?? null;
    });
  }
}
