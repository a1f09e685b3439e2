import { AwakenError, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { spawnCallIdOf } from "./commitOperation.js";
import type { DomainInput } from "./domainInputs.js";
import { encodeFact } from "./factCodec.js";
import type { PendingAction } from "./facts.js";
import type { FactPayload, IdleReason, TypedFact } from "./factVocabulary.js";
import type { ChildThreadState, InputContext, RunEffect, ThreadInputPlan } from "./ports.js";
import { workflowRunOfThread } from "./workflowIds.js";

/**
 * What client inputs do to a session's child threads (`planInputs` calls these inside the ledger's
 * transaction). A child's pending answers and run are its own: an answer routed to it by its call's
 * id, or an interrupt, is committed on its history and acts on its run; what the primary thread
 * must know of it (the child's status, an answer for its spawning call) is committed there, in the
 * same transaction.
 */

const TURN_ENDED: IdleReason = { kind: "turn_ended" };

/** Whether deciding `inputs` needs the child threads' state (read only when a batch needs it). */
export function needsThreads(ctx: InputContext, inputs: readonly DomainInput[]): boolean {
  if (ctx.threads !== undefined) return false;
  const { session } = ctx;
  // Only a parent waiting for a child can have one working or waiting for a client.
  const waitsForChild = session.pending.some((p) => p.kind === "thread_answer");
  return inputs.some((input) => {
    switch (input.kind) {
      case "interrupt":
        return input.targetThread !== undefined && input.targetThread !== session.threadId
          ? true
          : input.targetThread === undefined && waitsForChild;
      case "tool_result":
      case "tool_confirmation":
        return waitsForChild && !session.pending.some((p) => p.eventId === input.callId);
      default:
        return false;
    }
  });
}

/** One child thread as a batch sees it: its pending answers, its run, what the batch writes there. */
class ChildCursor {
  pending: PendingAction[];
  runState: string | null;
  readonly facts: TypedFact[] = [];
  readonly effects: RunEffect[] = [];

  constructor(readonly state: ChildThreadState) {
    this.pending = state.pending.map((p) => ({ ...p }));
    this.runState = state.activeRun?.state ?? null;
  }
}

/**
 * The batch's writes on child threads. `primary` appends a fact on the primary thread's history
 * (returning its id); `answeredOnPrimary` tells the primary's rules an answer for a spawning call
 * landed there (it may resume the parent's parked run).
 */
export class ChildInputs {
  private readonly cursors = new Map<string, ChildCursor>();

  constructor(
    threads: readonly ChildThreadState[],
    private readonly now: number,
    private readonly primary: (payload: FactPayload) => string,
    private readonly answeredOnPrimary: (childThread: string) => void,
  ) {
    for (const t of threads) this.cursors.set(t.threadId, new ChildCursor(t));
  }

  /** The child a client names: known to this session and not archived, or the input is refused. */
  named(threadId: string): ChildCursor {
    const cursor = this.cursors.get(threadId);
    if (!cursor) throw notFound("session thread", threadId.slice(0, 100));
    if (cursor.state.archived) {
      throw new AwakenError(
        "invalid_request",
        `session thread ${threadId} is archived and accepts no more events`,
      );
    }
    return cursor;
  }

  /** The child whose pending answers hold `callId` of one of `kinds`, if any. */
  owing(callId: string, kinds: readonly PendingAction["kind"][]): ChildCursor | null {
    for (const cursor of this.cursors.values()) {
      if (cursor.state.archived) continue;
      if (cursor.pending.some((p) => p.eventId === callId && kinds.includes(p.kind))) return cursor;
    }
    return null;
  }

  /** Every child with a run to stop (a session-wide interrupt interrupts them all). */
  working(): ChildCursor[] {
    return [...this.cursors.values()].filter((c) => !c.state.archived && c.runState !== null);
  }

  push(cursor: ChildCursor, payload: FactPayload): string {
    const id = newId("sevt", this.now);
    cursor.facts.push({ id, ...payload });
    return id;
  }

  /**
   * Interrupts a child: its run is cancelled (its epoch advances, so a late commit is fenced out),
   * its history closes what the run left open and goes idle, and the primary sees it idle. `echo`:
   * the interrupt fact itself, on the child's history (its id is returned).
   */
  interrupt(cursor: ChildCursor, targetThread: string | undefined): string {
    const echo = this.push(
      cursor,
      targetThread !== undefined ? { kind: "interrupt", targetThread } : { kind: "interrupt" },
    );
    cursor.pending = [];
    if (cursor.runState === null) return echo;
    cursor.effects.push({ kind: "cancel" });
    const open = cursor.state.openModelRequest;
    if (open) {
      this.push(cursor, {
        kind: "model_request_end",
        startId: open.startId,
        isError: true,
        provider: open.provider,
        model: open.model,
        usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      });
    }
    cursor.runState = null;
    this.push(cursor, { kind: "status_idle", reason: TURN_ENDED });
    this.primary({
      kind: "thread_status",
      thread: cursor.state.threadId,
      agentName: cursor.state.agentName,
      transition: { to: "idle", reason: TURN_ENDED },
    });
    return echo;
  }

  /**
   * The parent's answer for a child interrupted alone: its spawning call's result, an error naming
   * the interrupt, so the parent's turn goes on (as a child that stops otherwise answers).
   */
  answerForInterrupted(cursor: ChildCursor, parentPending: readonly PendingAction[]): void {
    const thread = cursor.state.threadId;
    if (!parentPending.some((p) => p.kind === "thread_answer" && p.eventId === thread)) return;
    this.primary({
      kind: "thread_message_received",
      fromThread: thread,
      fromAgentName: cursor.state.agentName,
      content: [],
    });
    // A workflow step's answer is its run's to collect (no call waits on it); a spawned child's is
    // its spawning call's result.
    if (workflowRunOfThread(thread) === null) {
      this.primary({
        kind: "tool_result",
        callId: spawnCallIdOf(thread),
        executor: "server",
        by: "server",
        content: [{ type: "text", text: "(the subagent stopped: the user interrupted it)" }],
        isError: true,
      });
    }
    this.answeredOnPrimary(thread);
  }

  /**
   * One answer landed in a child. Its parked run resumes once nothing is pending there (the primary
   * sees it running again); a partial answer re-emits its idle with the ids still waiting, on its
   * history and on the primary's.
   */
  answered(cursor: ChildCursor, callId: string | null): void {
    if (callId !== null) cursor.pending = cursor.pending.filter((p) => p.eventId !== callId);
    if (cursor.runState !== "awaiting") return;
    const { threadId: thread, agentName } = cursor.state;
    if (cursor.pending.length === 0) {
      cursor.effects.push({ kind: "resume" });
      cursor.runState = "queued";
      this.push(cursor, { kind: "status_running" });
      this.primary({ kind: "thread_status", thread, agentName, transition: { to: "running" } });
      return;
    }
    const reason: IdleReason = {
      kind: "waiting",
      callIds: [...new Set(cursor.pending.map((p) => p.eventId))],
    };
    this.push(cursor, { kind: "status_idle", reason });
    this.primary({ kind: "thread_status", thread, agentName, transition: { to: "idle", reason } });
  }

  /** The child threads' plans, in the order the session lists them; children the batch left alone are absent. */
  plans(): ThreadInputPlan[] {
    return [...this.cursors.values()]
      .filter((c) => c.facts.length > 0 || c.effects.length > 0)
      .map((c) => ({ threadId: c.state.threadId, facts: c.facts.map(encodeFact), effects: c.effects }));
  }
}
