import { type AGUIEvent, EventType, type RunAgentInput } from "@ag-ui/core";
import type { AgentDefinition } from "../../control/agentDefinition.js";
import type { DomainInput } from "../../coordinator/domainInputs.js";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import { canonicalJson } from "../../kernel/canonicalJson.js";
import { AwakenError } from "../../kernel/errors.js";
import type { AgUiPorts } from "./agUiPorts.js";
import type { EventSink } from "./eventSink.js";
import { mapRunInput } from "./inputMapping.js";
import { projectMessages } from "./messageProjection.js";
import type { RunEnd } from "./runEnd.js";
import { RunEventFormatter } from "./runEventFormatter.js";
import { RunRefusal } from "./runRefusal.js";

/** How long the same new input counts as a repeat of the thread's last send (a double submit). */
const DOUBLE_SUBMIT_WINDOW_MS = 60_000;

export interface AgUiRunRequest {
  workspaceId: string;
  agentId: string;
  input: RunAgentInput;
  /** Told about failures that are the server's, not the client's (the client sees no detail). */
  logFailure(error: unknown): void;
}

/**
 * One AG-UI run on the thread `input.threadId` names: RUN_STARTED, then (on an existing thread)
 * the committed history as MESSAGES_SNAPSHOT, then the turn the request's new input started (or
 * the active turn it attaches to) until the idle that ends it. Input is mapped and checked in full
 * before anything is written. A client that goes away before the run finished interrupts the turn.
 */
export async function runAgUi(ports: AgUiPorts, request: AgUiRunRequest, sink: EventSink): Promise<void> {
  const { input } = request;
  const formatter = new RunEventFormatter(
    input.threadId,
    input.runId,
    new Set(input.messages.map((m) => m.id)),
  );
  await sink.write([formatter.started()]);
  let session: SessionRecord | null = null;
  let finished = false;
  /** Stops the run's tail: when the client goes away, or when the run ends first. */
  const tailStop = new AbortController();
  const onClosed = () => tailStop.abort();
  sink.closed.addEventListener("abort", onClosed, { once: true });
  if (sink.closed.aborted) tailStop.abort();
  const finish = async (end: RunEnd) => {
    finished = true;
    await sink.write(formatter.finish(end));
  };
  try {
    const existing = await ports.entry.findNamed(request.workspaceId, input.threadId);
    if (existing) checkAgent(existing, request.agentId, input.threadId);
    const definition =
      existing?.agent.definition ?? (await ports.agentDefinition(request.workspaceId, request.agentId));
    const history = existing ? await ports.history(existing.threadId, 0) : [];
    for (const fact of history) formatter.seed(fact);
    const inputs = mapRunInput(input, {
      committedUserMessageIds: new Set(
        history.flatMap((f) => (f.kind === "user_message" && f.clientMessageId ? [f.clientMessageId] : [])),
      ),
      pending: existing ? [...existing.pending, ...(await ports.childAsks(existing, history))] : [],
      customToolNames: customToolNames(definition),
      confirmedCallIds: new Set(history.flatMap((f) => (f.kind === "tool_confirmation" ? [f.callId] : []))),
    });
    if (!existing && inputs.length === 0) {
      // A new thread with nothing to say: no session is made for it.
      await finish({ kind: "success", pendingToolCallIds: [] });
      return;
    }
    if (sink.closed.aborted) return;
    session =
      existing ??
      (await ports.entry.openNamed(request.workspaceId, input.threadId, { agent: { id: request.agentId } }));
    checkAgent(session, request.agentId, input.threadId);
    const historyEnd = history.at(-1)?.seq ?? 0;
    let after = historyEnd;
    // Opened before the input is written: the turn it starts may stream its first previews before
    // a tail opened after the send would have subscribed. Facts up to `after` are skipped below.
    const live = turnFollows(existing, inputs) ? ports.tail(session, historyEnd, tailStop.signal) : null;
    if (inputs.length > 0) {
      // A double submit (the same new input twice, under any run id) enters it once.
      const echo = await ports.send(request.workspaceId, session.id, inputs, {
        key: `ag-ui:${canonicalJson(inputs)}`,
        strict: false,
        windowMs: DOUBLE_SUBMIT_WINDOW_MS,
      });
      // An answer routed to a subagent echoes on its thread: only this thread's echo moves `after`.
      after = Math.max(after, ...echo.filter((f) => f.threadId === session?.threadId).map((f) => f.seq));
    }
    if (existing) {
      const since = await ports.history(session.threadId, history.at(-1)?.seq ?? 0, after);
      for (const fact of since) formatter.seed(fact);
      await sink.write(snapshotsFor(history, since, input));
    }
    if (!live) {
      await finish(formatter.settledEnd());
      return;
    }
    for await (const item of live) {
      if (item.kind === "fact" && item.fact.seq <= after) continue;
      if (item.kind === "preview") {
        await sink.write(formatter.preview(item.evidence));
        continue;
      }
      const { events, end } = formatter.fact(item.fact);
      await sink.write(events);
      if (end) {
        await finish(end);
        return;
      }
    }
    if (!sink.closed.aborted) {
      await finish({
        kind: "error",
        code: "stream_ended",
        message: "The thread's event stream ended before the turn did.",
      });
    }
  } catch (error) {
    if (!finished && !sink.closed.aborted) {
      finished = true;
      const end = runErrorOf(error);
      if (end.kind === "error" && end.code === "internal") request.logFailure(error);
      await sink.write(formatter.finish(end));
    }
  } finally {
    sink.closed.removeEventListener("abort", onClosed);
    tailStop.abort();
    if (!finished && session && sink.closed.aborted)
      await interruptActiveTurn(ports, request.workspaceId, session);
  }
}

/**
 * Whether the turn this run reports is still to come. With nothing new the run attaches to a
 * turn that is running, or finishes at once; a message to a session parked on answers is queued
 * until they arrive, so nothing follows it either.
 */
function turnFollows(existing: SessionRecord | null, inputs: readonly DomainInput[]): boolean {
  if (!existing) return true;
  const answers = inputs.some((i) => i.kind === "tool_result" || i.kind === "tool_confirmation");
  if (existing.status !== "idle") return true;
  if (answers) return true;
  return inputs.length > 0 && existing.pending.length === 0;
}

/**
 * The client went away mid-turn: `abortRun()` means stop. Only a run still queued or executing is
 * interrupted (decided by the ledger), so a turn that ended meanwhile keeps its pending calls.
 */
async function interruptActiveTurn(
  ports: AgUiPorts,
  workspaceId: string,
  session: SessionRecord,
): Promise<void> {
  try {
    await ports.send(workspaceId, session.id, [{ kind: "interrupt", onlyWhileWorking: true }]);
  } catch {
    // The session ended or was deleted meanwhile: there is nothing left to interrupt.
  }
}

function checkAgent(session: SessionRecord, agentId: string, threadId: string): void {
  if (session.agent.agentId === agentId) return;
  throw new RunRefusal(
    "thread_agent_mismatch",
    `Thread ${JSON.stringify(threadId)} is a conversation with agent ${session.agent.agentId}, not ${agentId}; ` +
      `post it to /v1/ag-ui/agents/${session.agent.agentId}, or start a new thread.`,
  );
}

function customToolNames(definition: AgentDefinition): Set<string> {
  return new Set(definition.tools.flatMap((tool) => (tool.type === "custom" ? [tool.name] : [])));
}

/**
 * The client merges a snapshot into its list keeping its own order and appending what it lacks,
 * so a client holding only its new message (a fresh page on an old thread) would see that message
 * before the history. Then a snapshot without this request's input comes first (the client's
 * list becomes the history), and the full one puts the new input after it.
 */
function snapshotsFor(
  history: readonly CommittedTypedFact[],
  since: readonly CommittedTypedFact[],
  input: RunAgentInput,
): AGUIEvent[] {
  const full = snapshotOf([...history, ...since], input);
  const ids = (event: AGUIEvent) =>
    (event as { messages: Array<{ id: string }> }).messages.map((message) => message.id);
  const wanted = ids(full);
  const inSnapshot = new Set(wanted);
  const merged = input.messages.map((m) => m.id).filter((id) => inSnapshot.has(id));
  const kept = new Set(merged);
  merged.push(...wanted.filter((id) => !kept.has(id)));
  if (merged.every((id, i) => id === wanted[i])) return [full];
  return [snapshotOf(history, input), full];
}

function snapshotOf(facts: readonly CommittedTypedFact[], input: RunAgentInput): AGUIEvent {
  const toolMessageIds = new Map<string, string>();
  for (const message of input.messages) {
    if (message.role === "tool" && !toolMessageIds.has(message.toolCallId)) {
      toolMessageIds.set(message.toolCallId, message.id);
    }
  }
  return { type: EventType.MESSAGES_SNAPSHOT, messages: projectMessages(facts, toolMessageIds) };
}

function runErrorOf(error: unknown): RunEnd {
  if (error instanceof RunRefusal) return { kind: "error", code: error.code, message: error.message };
  if (error instanceof AwakenError && error.category !== "internal") {
    return { kind: "error", code: error.code, message: error.message };
  }
  // Never a stack or an internal message on the wire.
  return { kind: "error", code: "internal", message: "The run failed on the server; try again." };
}
