import type { UIMessageChunk } from "ai";
import type { CommittedTypedFact, IdleReason, ToolCall } from "../../coordinator/factVocabulary.js";
import type { LiveEvidence } from "../../coordinator/ports.js";
import { contentText, contentToOutput } from "./toolOutput.js";

/** A live preview as the session tail yields it; `eventId` is the id of the fact it becomes. */
export type PreviewEvidence = LiveEvidence;

export type TurnItem =
  | { kind: "fact"; fact: CommittedTypedFact }
  | { kind: "preview"; evidence: PreviewEvidence };

export interface TurnChunksOptions {
  /** The assistant message this stream writes (see `assistantMessageId.ts`). */
  messageId: string;
  /**
   * Facts up to this seq are history replayed before going live: an idle among them paused the
   * turn for an answer that has since come, so it does not end the stream.
   */
  replayThroughSeq?: number;
  /** Calls the client's message already holds (a continuation): their outputs may be written. */
  knownCallIds?: Iterable<string>;
  /** Results the client itself just sent: its message already shows them exactly as it sent them. */
  clientAnswered?: Iterable<string>;
}

type OpenPart =
  | { kind: "text"; streamed: string }
  | { kind: "reasoning" }
  | { kind: "tool_input"; toolName: string; streamed: string };

const INTERRUPTED_TOOL_INPUT = "The model request ended before this tool call was complete.";
const RETRIES_EXHAUSTED = "The model request failed and its retries are exhausted.";

/**
 * Turns one assistant turn of committed facts and live previews into AI SDK UI message chunks, in
 * the order the client enforces (a part's start before its deltas, a tool part before its
 * approval request or output). Pure: the route feeds it what the tail yields and writes what it
 * returns; `done` says the turn ended and nothing more will be written.
 */
export class TurnChunks {
  private readonly messageId: string;
  private readonly replayThroughSeq: number;
  private readonly known: Set<string>;
  private readonly clientAnswered: Set<string>;
  private readonly open = new Map<string, OpenPart>();
  private readonly denied = new Set<string>();
  private inStep = false;
  private interrupted = false;
  /** The last failure the turn did not retry: what a `retries_exhausted` idle shows. */
  private failure: string | null = null;
  private started = false;
  private ended = false;

  constructor(options: TurnChunksOptions) {
    this.messageId = options.messageId;
    this.replayThroughSeq = options.replayThroughSeq ?? 0;
    this.known = new Set(options.knownCallIds ?? []);
    this.clientAnswered = new Set(options.clientAnswered ?? []);
  }

  get done(): boolean {
    return this.ended;
  }

  /** The stream's first chunk. */
  start(): UIMessageChunk[] {
    if (this.started) return [];
    this.started = true;
    return [{ type: "start", messageId: this.messageId }];
  }

  push(item: TurnItem): UIMessageChunk[] {
    if (this.ended) return [];
    const out = this.start();
    if (item.kind === "preview") this.preview(item.evidence, out);
    else this.fact(item.fact, out);
    return out;
  }

  /** Ends a turn whose tail stopped without an idle (the session was terminated or deleted). */
  finish(): UIMessageChunk[] {
    if (this.ended) return [];
    const out = this.start();
    this.closeStep(out);
    out.push({ type: "finish" });
    this.ended = true;
    return out;
  }

  /** A failure after the stream started (the tail broke): shown, then the message is finished. */
  fail(errorText: string): UIMessageChunk[] {
    if (this.ended) return [];
    const out = this.start();
    this.closeStep(out);
    out.push({ type: "error", errorText }, { type: "finish", finishReason: "error" });
    this.ended = true;
    return out;
  }

  private preview(evidence: PreviewEvidence, out: UIMessageChunk[]): void {
    const id = evidence.eventId;
    if (evidence.kind === "preview_start") {
      if (this.open.has(id)) return;
      this.openStep(out);
      if (evidence.preview === "text") {
        this.open.set(id, { kind: "text", streamed: "" });
        out.push({ type: "text-start", id });
      } else if (evidence.preview === "thinking") {
        this.open.set(id, { kind: "reasoning" });
        out.push({ type: "reasoning-start", id });
      } else {
        const toolName = evidence.toolName ?? "tool";
        this.open.set(id, { kind: "tool_input", toolName, streamed: "" });
        this.known.add(id);
        out.push({ type: "tool-input-start", toolCallId: id, toolName });
      }
      return;
    }
    const part = this.open.get(id);
    // A delta for a preview that began before this stream opened: the committed fact tells all.
    if (!part) return;
    if (evidence.kind === "preview_delta") {
      if (evidence.text === "") return;
      if (part.kind === "text") {
        part.streamed += evidence.text;
        out.push({ type: "text-delta", id, delta: evidence.text });
      } else if (part.kind === "reasoning") {
        out.push({ type: "reasoning-delta", id, delta: evidence.text });
      } else {
        part.streamed += evidence.text;
        out.push({ type: "tool-input-delta", toolCallId: id, inputTextDelta: evidence.text });
      }
      return;
    }
    this.abandon(id, part, out);
  }

  /** A preview that will not commit: the client has no way to drop a part, so it is closed. */
  private abandon(id: string, part: OpenPart, out: UIMessageChunk[]): void {
    this.open.delete(id);
    if (part.kind === "text") out.push({ type: "text-end", id });
    else if (part.kind === "reasoning") out.push({ type: "reasoning-end", id });
    else {
      // Marked server-run so the client's "all tool calls answered" check never counts it.
      out.push({
        type: "tool-input-error",
        toolCallId: id,
        toolName: part.toolName,
        input: part.streamed,
        providerExecuted: true,
        errorText: INTERRUPTED_TOOL_INPUT,
      });
    }
  }

  private fact(fact: CommittedTypedFact, out: UIMessageChunk[]): void {
    switch (fact.kind) {
      case "model_request_start":
        // A span is committed with its answer, after the previews that opened its step: the step
        // is this request's (the previous request's end closed its own).
        this.openStep(out);
        return;
      case "model_request_end":
        this.closeStep(out);
        return;
      case "agent_message":
        this.agentMessage(fact.id, contentText(fact.content), out);
        return;
      case "tool_call":
        this.toolCall(fact.call, out);
        return;
      case "thread_ask":
        // A subagent's call that waits for the client (an approval, a custom tool): the client
        // answers it like the agent's own, and the answer is routed to the subagent by its id.
        this.toolCall(fact.call, out);
        return;
      case "thread_status":
        // A subagent parked on the client: the turn pauses here, as on the agent's own idle.
        if (fact.transition.to === "idle" && fact.transition.reason.kind === "waiting")
          this.idle(fact.seq, fact.transition.reason, out);
        return;
      case "tool_confirmation":
        if (!fact.allowed && this.known.has(fact.callId)) {
          this.denied.add(fact.callId);
          out.push({ type: "tool-output-denied", toolCallId: fact.callId });
        }
        return;
      case "tool_result":
        // A denial's result restates the denial, which the client already shows as denied.
        if (this.denied.has(fact.callId) || !this.known.has(fact.callId)) return;
        if (fact.by === "client" && this.clientAnswered.has(fact.callId)) return;
        out.push(
          fact.isError
            ? { type: "tool-output-error", toolCallId: fact.callId, errorText: contentText(fact.content) }
            : {
                type: "tool-output-available",
                toolCallId: fact.callId,
                output: contentToOutput(fact.content, fact.by),
                ...(fact.executor === "client" ? {} : { providerExecuted: true }),
              },
        );
        return;
      case "error":
        if (fact.retryStatus !== "retrying") this.failure = fact.message;
        return;
      case "interrupt":
        this.interrupted = true;
        return;
      case "status_running":
        this.failure = null;
        return;
      case "status_idle":
        this.idle(fact.seq, fact.reason, out);
        return;
      case "status_terminated":
      case "session_deleted":
        out.push(...this.finish());
        return;
      default:
        // A fact some preview became (a thinking block): its part is complete now.
        this.closePreview(fact.id, out);
    }
  }

  private agentMessage(id: string, text: string, out: UIMessageChunk[]): void {
    const part = this.open.get(id);
    if (part?.kind === "text") {
      this.open.delete(id);
      // Deltas lost on the way (none are expected) are made up from the committed text.
      if (text.startsWith(part.streamed) && text.length > part.streamed.length) {
        out.push({ type: "text-delta", id, delta: text.slice(part.streamed.length) });
      }
      out.push({ type: "text-end", id });
      return;
    }
    if (part) this.closePreview(id, out);
    if (text === "") return;
    this.openStep(out);
    out.push({ type: "text-start", id }, { type: "text-delta", id, delta: text }, { type: "text-end", id });
  }

  private toolCall(call: ToolCall, out: UIMessageChunk[]): void {
    const part = this.open.get(call.id);
    if (part) this.open.delete(call.id);
    this.openStep(out);
    this.known.add(call.id);
    out.push({
      type: "tool-input-available",
      toolCallId: call.id,
      toolName: call.name,
      input: call.input,
      // Server and MCP calls run here: the client must not run them (its onToolCall skips them).
      ...(call.executor === "client" ? {} : { providerExecuted: true }),
    });
    if (call.permission?.decision === "ask") {
      out.push({ type: "tool-approval-request", approvalId: call.id, toolCallId: call.id });
    }
  }

  private idle(seq: number, reason: IdleReason, out: UIMessageChunk[]): void {
    if (seq <= this.replayThroughSeq) {
      this.failure = null;
      return;
    }
    this.closeStep(out);
    if (this.interrupted) {
      out.push({ type: "abort" }, { type: "finish" });
    } else if (reason.kind === "retries_exhausted") {
      out.push(
        { type: "error", errorText: this.failure ?? RETRIES_EXHAUSTED },
        { type: "finish", finishReason: "error" },
      );
    } else {
      out.push({ type: "finish", finishReason: finishReasonOf(reason) });
    }
    this.ended = true;
  }

  private closePreview(id: string, out: UIMessageChunk[]): void {
    const part = this.open.get(id);
    if (!part) return;
    this.open.delete(id);
    if (part.kind === "text") out.push({ type: "text-end", id });
    else if (part.kind === "reasoning") out.push({ type: "reasoning-end", id });
  }

  private openStep(out: UIMessageChunk[]): void {
    if (this.inStep) return;
    this.inStep = true;
    out.push({ type: "start-step" });
  }

  /** Ends the model request's step; a preview still open then will not commit. */
  private closeStep(out: UIMessageChunk[]): void {
    for (const [id, part] of [...this.open]) this.abandon(id, part, out);
    if (!this.inStep) return;
    this.inStep = false;
    out.push({ type: "finish-step" });
  }
}

function finishReasonOf(reason: IdleReason): "stop" | "tool-calls" | "content-filter" | "other" {
  switch (reason.kind) {
    case "turn_ended":
      return "stop";
    case "waiting":
      return "tool-calls";
    case "refusal":
      return "content-filter";
    default:
      return "other";
  }
}
