import { AwakenError } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { DomainInput } from "./domainInputs.js";
import { encodeFact } from "./factCodec.js";
import type { AnswerKind, Fact, PendingAction } from "./facts.js";
import type { FactPayload, IdleReason, TypedFact } from "./factVocabulary.js";
import { activeOutcome } from "./outcomes.js";
import type { InputContext, InputPlan, RunEffect } from "./ports.js";
import { ChildInputs, needsThreads } from "./threadInputRules.js";
import { workflowEnding } from "./workflowFold.js";

const IDLE_END_TURN: IdleReason = { kind: "turn_ended" };

/**
 * Decides what a batch of client inputs does to the session, inside the ledger's transaction.
 * Pure: the same context and inputs always give the same plan, and a rejected batch throws before
 * anything is written, so a bad request changes nothing.
 */
export function planInputs(ctx: InputContext, inputs: readonly DomainInput[], now: number): InputPlan {
  const { session, activeRun } = ctx;
  if (session.archivedAt !== null || session.status === "terminated") {
    throw new AwakenError(
      "session_terminated",
      `session ${session.id} is terminated and accepts no more events; create a new session to continue`,
    );
  }
  // Inputs for a child thread are decided on the children's state, read only when a batch needs it.
  if (needsThreads(ctx, inputs)) return { facts: [], effects: [], echoIds: [], needsThreads: true };
  const facts: TypedFact[] = [];
  const effects: RunEffect[] = [];
  const echoIds: string[] = [];
  let pending = session.pending.map((p) => ({ ...p }));
  // The run's state as this batch sees it; "new" is a run this batch starts.
  let runState: string | null = activeRun?.state ?? null;
  let runIsNew = false;
  // The outcome in progress as this batch sees it (a definition in the batch starts one).
  /** Workflow runs not yet ended (read for an interrupt), ended once by the first interrupt. */
  let openWorkflows = ctx.openWorkflows ?? [];
  let outcomeInProgress = ctx.outcomes ? (activeOutcome(ctx.outcomes)?.outcomeId ?? null) : null;

  // The session's status as this batch leaves it so far.
  let status = session.status;
  const push = (payload: FactPayload): string => {
    const id = newId("sevt", now);
    facts.push({ id, ...payload });
    if (payload.kind === "status_running") status = "running";
    if (payload.kind === "status_idle") status = "idle";
    return id;
  };
  /**
   * One answer landed. The parked run resumes once nothing is pending; a partial answer re-emits
   * the idle with the ids still waiting, so every client sees what is left. `byChild`: the answer
   * is a child's, for a parent that may be parked on its children with no idle.
   */
  const answered = (id: string | null, byChild = false) => {
    if (id !== null) pending = pending.filter((p) => p.eventId !== id);
    if (runState !== "awaiting") return;
    // A parent parked only on its children has no idle to repeat: it is running while it waits.
    if (pending.length > 0 && pending.every((p) => p.kind === "thread_answer")) {
      if (status !== "running") push({ kind: "status_running" });
      return;
    }
    if (pending.length === 0) {
      effects.push({ kind: "resume" });
      runState = "queued";
      // A parent parked on its children is running already: its child's answer resumes it quietly.
      if (!byChild || status !== "running") push({ kind: "status_running" });
    } else {
      push({
        kind: "status_idle",
        reason: { kind: "waiting", callIds: [...new Set(pending.map((p) => p.eventId))] },
      });
    }
  };

  const children = new ChildInputs(ctx.threads ?? [], now, push, (thread) =>
    // A child's answer for its spawning call, committed on this (its parent's) history.
    answered(pending.find((p) => p.kind === "thread_answer" && p.eventId === thread)?.eventId ?? null, true),
  );

  for (const input of inputs) {
    switch (input.kind) {
      case "define_outcome": {
        if (!ctx.outcomes) throw new Error("an outcome's definition needs the session's outcomes read");
        if (outcomeInProgress !== null) {
          throw new AwakenError(
            "invalid_request",
            `outcome ${outcomeInProgress} is still in progress on this session; wait for its final verdict ` +
              "or send user.interrupt before defining another outcome",
          );
        }
        outcomeInProgress = newId("outc", now);
        echoIds.push(
          push({
            kind: "outcome_defined",
            outcomeId: outcomeInProgress,
            description: input.description,
            rubric: input.rubric,
            maxIterations: input.maxIterations,
          }),
        );
        // The description is the agent's task: it starts a turn as a message does.
        if (runState === null) {
          effects.push({ kind: "start", runId: newId("run", now) });
          runState = "queued";
          runIsNew = true;
          push({ kind: "status_running" });
        }
        break;
      }
      case "message": {
        const { content, clientMessageId, clientMetadata } = input;
        echoIds.push(
          push({
            kind: "user_message",
            content,
            ...(clientMessageId !== undefined ? { clientMessageId } : {}),
            ...(clientMetadata !== undefined ? { clientMetadata } : {}),
          }),
        );
        if (runState === null) {
          effects.push({ kind: "start", runId: newId("run", now) });
          runState = "queued";
          runIsNew = true;
          push({ kind: "status_running" });
        }
        // Otherwise the message is queued input: the running turn (or the run once its pending
        // actions are answered) reads it from history.
        break;
      }
      case "tool_result": {
        const child = pending.some((p) => p.eventId === input.callId)
          ? null
          : children.owing(input.callId, resultKinds(input));
        if (child) {
          // Routed by its call's id to the child thread that waits for it.
          const owed = owedResult(child.pending, input);
          echoIds.push(
            children.push(child, {
              kind: "tool_result",
              callId: input.callId,
              executor: owed.kind === "client_tool_result" ? "client" : "server",
              by: "client",
              content: input.content,
              isError: input.isError,
              ...(input.unset && input.unset.length > 0 ? { unset: [...input.unset] } : {}),
              thread: child.state.threadId,
            }),
          );
          children.answered(child, input.callId);
          break;
        }
        const owed = owedResult(pending, input);
        echoIds.push(
          push({
            kind: "tool_result",
            callId: input.callId,
            // A custom tool's result, or a self-hosted worker's result for a built-in call.
            executor: owed.kind === "client_tool_result" ? "client" : "server",
            by: "client",
            content: input.content,
            isError: input.isError,
            ...(input.unset && input.unset.length > 0 ? { unset: [...input.unset] } : {}),
          }),
        );
        answered(input.callId);
        break;
      }
      case "interrupt": {
        if (input.onlyWhileWorking && (runState === null || runState === "awaiting")) break;
        if (input.targetThread !== undefined && input.targetThread !== session.threadId) {
          // One child alone: its parent gets an answer for it and goes on.
          const child = children.named(input.targetThread);
          const working = child.runState !== null;
          echoIds.push(children.interrupt(child, input.targetThread));
          if (working) children.answerForInterrupted(child, pending);
          break;
        }
        echoIds.push(
          push(
            input.targetThread !== undefined
              ? { kind: "interrupt", targetThread: input.targetThread }
              : { kind: "interrupt" },
          ),
        );
        pending = [];
        // Without a thread named, every child's run stops too; the primary sees each one idle.
        if (input.targetThread === undefined)
          for (const child of children.working()) children.interrupt(child, undefined);
        // An interrupt ends the outcome in progress; an evaluation under way ends with its verdict.
        outcomeInProgress = null;
        facts.push(...closeOpenEvaluation(ctx, now));
        // The primary's workflow runs end as stopped: their steps stop with the children above.
        facts.push(
          ...openWorkflows.flatMap((run) =>
            workflowEnding(run, { type: "stopped" }, () => newId("sevt", now)),
          ),
        );
        openWorkflows = [];
        if (runState !== null) {
          if (runIsNew) {
            // The run this batch started never reached the store: drop it instead of cancelling.
            const index = effects.findIndex((e) => e.kind === "start");
            if (index >= 0) effects.splice(index, 1);
          } else {
            effects.push({ kind: "cancel" });
            facts.push(...closeOpenRequestTyped(ctx, now));
          }
          runState = null;
          runIsNew = false;
          push({ kind: "status_idle", reason: IDLE_END_TURN });
        }
        break;
      }
      case "system_message": {
        echoIds.push(push({ kind: "system_message", content: input.content }));
        break;
      }
      case "tool_confirmation": {
        const target = input.callId;
        const child = pending.some((p) => p.eventId === target)
          ? null
          : children.owing(target, ["confirmation"]);
        if (child) {
          // Routed by its call's id to the child thread whose run asked.
          const asked = askedConfirmation(child.pending, target);
          const thread = child.state.threadId;
          const done = confirm(
            asked,
            input,
            child.pending,
            (payload) => children.push(child, payload),
            thread,
          );
          echoIds.push(done.echo);
          child.pending = done.pending;
          children.answered(child, null);
          break;
        }
        const done = confirm(askedConfirmation(pending, target), input, pending, push);
        echoIds.push(done.echo);
        pending = done.pending;
        answered(null);
        break;
      }
    }
  }
  const threads = children.plans();
  return { facts: facts.map(encodeFact), effects, echoIds, ...(threads.length > 0 ? { threads } : {}) };
}

function askedConfirmation(pending: readonly PendingAction[], target: string): PendingAction {
  const asked = pending.find((p) => p.eventId === target && p.kind === "confirmation");
  if (asked) return asked;
  throw new AwakenError(
    "tool_use_not_pending",
    `tool call ${JSON.stringify(target)} is not waiting for a confirmation: it was already answered, ` +
      "interrupted, or its tool call did not ask",
  );
}

/**
 * A confirmation's facts on the thread that asked (`push`): its echo (with `thread`, the child it
 * was routed to) and, for a denial, the call's error result; and that thread's pending answers after it.
 */
function confirm(
  asked: PendingAction,
  input: Extract<DomainInput, { kind: "tool_confirmation" }>,
  pending: readonly PendingAction[],
  push: (payload: FactPayload) => string,
  thread?: string,
): { echo: string; pending: PendingAction[] } {
  const target = input.callId;
  // Echoed into history and streams: the SDK's runner releases a held call only when it sees it.
  const echo = push({
    kind: "tool_confirmation",
    callId: target,
    allowed: input.allowed,
    denyMessage: input.denyMessage,
    ...(thread !== undefined ? { thread } : {}),
  });
  // Cloud allow: the resumed run executes it. Self-hosted allow: the client's worker now owes the
  // result, in the call's place (idles list pending ids in call order).
  const owesResult = input.allowed && asked.afterAllow === "client";
  const next = owesResult
    ? pending.map((p) => (p === asked ? { eventId: target, kind: "server_tool_result" as const } : p))
    : pending.filter((p) => p !== asked);
  if (!input.allowed) {
    // Denied: the tool never runs; the model is told so by the server, nobody posts a result.
    const message = input.denyMessage;
    const text =
      message !== null && message.trim() !== ""
        ? `The user denied this tool call: ${message}`
        : "The user denied this tool call.";
    push({
      kind: "tool_result",
      callId: target,
      executor: asked.mcp ? "mcp" : asked.harness ? "harness" : "server",
      by: "server",
      content: [{ type: "text", text }],
      isError: true,
    });
  }
  return { echo, pending: next };
}

/** The pending kinds a result may answer (see `owedResult`). */
function resultKinds(input: Extract<DomainInput, { kind: "tool_result" }>): AnswerKind[] {
  return input.executor === "client"
    ? ["client_tool_result"]
    : input.executor === "server"
      ? ["server_tool_result"]
      : ["client_tool_result", "server_tool_result"];
}

/**
 * The pending answer a result is for. A protocol that names custom and built-in results apart says
 * which it sent (`executor`); an answer for a call of the other kind is refused like a stale one.
 */
function owedResult(pending: readonly PendingAction[], input: Extract<DomainInput, { kind: "tool_result" }>) {
  const kinds = resultKinds(input);
  const owed = pending.find((p) => p.eventId === input.callId && kinds.includes(p.kind));
  if (owed) return owed;
  const id = JSON.stringify(input.callId);
  throw new AwakenError(
    "tool_use_not_pending",
    input.executor === "server"
      ? `tool call ${id} is not waiting for a result from the client: only a built-in tool call of a ` +
          "self_hosted environment that is allowed and not yet answered takes one (answered, interrupted, " +
          "still awaiting its confirmation, or run by the server are not)"
      : `tool call ${id} is not waiting for a result: it was already answered, interrupted, or is not ` +
          "a custom tool call of this session",
  );
}

/**
 * The grader a cancelled run was running can no longer commit its verdict: the interrupt gives the
 * open evaluation its end, so each start has exactly one.
 */
function closeOpenEvaluation(ctx: InputContext, now: number): TypedFact[] {
  const open = ctx.outcomes ? activeOutcome(ctx.outcomes) : null;
  if (!open?.openStart) return [];
  return [
    {
      id: newId("sevt", now),
      kind: "outcome_evaluation_end",
      outcomeId: open.outcomeId,
      startId: open.openStart.id,
      iteration: open.openStart.iteration,
      result: "interrupted",
      explanation: "The user interrupted the session while the grader was evaluating the attempt.",
      model: null,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    },
  ];
}

/**
 * A cancelled worker can no longer commit, so the coordinator closes the model request it left open:
 * the preview it was streaming ends and the span does not dangle into the next turn.
 */
function closeOpenRequestTyped(ctx: InputContext, now: number): TypedFact[] {
  const open = ctx.openModelRequest;
  if (!open) return [];
  return [
    {
      id: newId("sevt", now),
      kind: "model_request_end",
      startId: open.startId,
      isError: true,
      provider: open.provider,
      model: open.model,
      usage: {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      },
    },
  ];
}

export function closeOpenRequest(ctx: InputContext, now: number): Fact[] {
  return closeOpenRequestTyped(ctx, now).map(encodeFact);
}

export { IDLE_END_TURN };
