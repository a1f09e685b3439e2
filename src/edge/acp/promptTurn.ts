import {
  RequestError,
  type SessionUpdate,
  type StopReason,
  type ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import Anthropic from "@anthropic-ai/sdk";
import { updatesOf } from "./eventUpdates.js";
import { followSession } from "./liveFeed.js";
import type { PermissionDecision } from "./permissions.js";
import type { ServerSessions, UserEvent, WireEvent } from "./serverSessions.js";
import { TOOL_USE_TYPES, toolCallOf } from "./toolCalls.js";

/** The editor's side of one prompt turn. */
export interface TurnPeer {
  update(update: SessionUpdate): Promise<void>;
  /** Asks the user about a call the agent's permission policy holds for a confirmation. */
  askPermission(call: ToolCallUpdate): Promise<PermissionDecision>;
}

/** After a cancel, how long the turn waits for the session to confirm it stopped. */
const CANCEL_GRACE_MS = 10_000;

/**
 * One `session/prompt`: the user message posted to the session, then the session's live tail
 * shown to the editor until the session rests. Previews stream as message and thought chunks, the
 * committed events as the same updates a replay shows; a confirmation the agent asks for is the
 * editor's permission question, answered back as `user.tool_confirmation`; a cancel is a
 * `user.interrupt`. Only what the session committed (and its previews) is shown.
 */
export class PromptTurn {
  private readonly stop = new AbortController();
  private cancelled = false;
  private interruptPosted = false;
  private posted = false;
  /** The text each preview showed, by the event id its final event will carry. */
  private readonly previews = new Map<string, { thought: boolean; text: string }>();
  private readonly calls = new Map<string, WireEvent>();
  private readonly answered = new Set<string>();
  private parked = false;
  private lastError: string | null = null;

  constructor(
    private readonly api: ServerSessions,
    private readonly sessionId: string,
    private readonly peer: TurnPeer,
  ) {}

  /** `session/cancel`: the turn is interrupted and its prompt answers "cancelled". */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    if (this.posted) void this.interrupt();
    // The session's idle normally ends the turn; a session that never says so does not hold it.
    setTimeout(() => this.stop.abort(), CANCEL_GRACE_MS).unref();
  }

  async run(content: Array<Record<string, unknown>>): Promise<StopReason> {
    try {
      const opened = await this.api.stream(this.sessionId, this.stop.signal);
      if (this.cancelled) return "cancelled";
      const [echo] = await this.api.send(this.sessionId, [{ type: "user.message", content }]);
      if (!echo) throw RequestError.internalError(undefined, "the server did not echo the message");
      this.posted = true;
      if (this.cancelled) void this.interrupt();
      for await (const event of followSession(this.api, this.sessionId, opened, echo.id, this.stop.signal)) {
        const stop = await this.observe(event);
        if (stop) return stop;
      }
      if (this.cancelled) return "cancelled";
      throw RequestError.internalError(undefined, "the session's event stream ended before the turn did");
    } catch (error) {
      if (this.cancelled && this.stop.signal.aborted) return "cancelled";
      throw error;
    } finally {
      this.stop.abort();
    }
  }

  /** Shows one event; answers the turn's stop reason when the session came to rest. */
  private async observe(event: WireEvent): Promise<StopReason | null> {
    switch (event.type) {
      case "event_start":
        return this.previewStarted(event);
      case "event_delta":
        return this.previewDelta(event);
      case "agent.message":
        await this.finalMessage(event);
        return null;
      case "user.tool_confirmation":
        if (event.result === "allow" && typeof event.tool_use_id === "string") {
          await this.show({
            sessionUpdate: "tool_call_update",
            toolCallId: event.tool_use_id,
            status: "in_progress",
          });
        }
        return null;
      case "user.interrupt":
        // A session parked on answers says no idle after an interrupt: it was at rest already.
        return this.cancelled && this.parked ? "cancelled" : null;
      case "session.error":
        this.lastError = errorMessage(event);
        return null;
      case "session.status_running":
        this.parked = false;
        return null;
      case "session.status_idle":
        return this.idle(event);
      case "session.status_terminated":
      case "session.deleted":
        if (this.cancelled) return "cancelled";
        throw RequestError.internalError(undefined, `session ${this.sessionId} has ended`);
      default:
        if (TOOL_USE_TYPES.has(event.type)) this.calls.set(event.id, event);
        for (const update of updatesOf(event)) await this.show(update);
        return null;
    }
  }

  private async previewStarted(event: WireEvent): Promise<null> {
    const started = event.event as { id?: unknown; type?: unknown } | undefined;
    if (typeof started?.id === "string") {
      this.previews.set(started.id, { thought: started.type === "agent.thinking", text: "" });
    }
    return null;
  }

  private async previewDelta(event: WireEvent): Promise<null> {
    const preview = typeof event.event_id === "string" ? this.previews.get(event.event_id) : undefined;
    const delta = event.delta as { content?: { type?: unknown; text?: unknown } } | undefined;
    const text = delta?.content?.text;
    if (!preview || typeof text !== "string" || text === "") return null;
    preview.text += text;
    await this.show({
      sessionUpdate: preview.thought ? "agent_thought_chunk" : "agent_message_chunk",
      content: { type: "text", text },
      messageId: event.event_id as string,
    });
    return null;
  }

  /** The committed message: what its preview did not show yet (all of it when none streamed). */
  private async finalMessage(event: WireEvent): Promise<void> {
    const preview = this.previews.get(event.id);
    this.previews.delete(event.id);
    const updates = updatesOf(event);
    if (!preview || preview.text === "") {
      for (const update of updates) await this.show(update);
      return;
    }
    const full = updates
      .map((u) =>
        u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "",
      )
      .join("");
    // Previews are best effort: the committed text is the truth, so a diverged preview is followed by it whole.
    const rest = full.startsWith(preview.text) ? full.slice(preview.text.length) : full;
    if (rest !== "") {
      await this.show({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: rest },
        messageId: event.id,
      });
    }
  }

  private async idle(event: WireEvent): Promise<StopReason | null> {
    const reason = event.stop_reason as { type?: string; event_ids?: unknown } | undefined;
    if (this.cancelled) return "cancelled";
    switch (reason?.type) {
      case "requires_action":
        return this.answer(Array.isArray(reason.event_ids) ? reason.event_ids.map(String) : []);
      case "refusal":
        return "refusal";
      case "retries_exhausted":
        throw RequestError.internalError(
          undefined,
          `the turn failed: ${this.lastError ?? "retries exhausted"}`,
        );
      case "budget_reached":
        throw RequestError.internalError(undefined, "the turn stopped: the session's budget is reached");
      default:
        return "end_turn";
    }
  }

  /**
   * The session waits for answers: the editor decides each confirmation; answers it cannot give
   * (a custom tool's result) end the prompt, and the session waits for them over another client.
   */
  private async answer(ids: string[]): Promise<StopReason | null> {
    this.parked = true;
    const open = ids.filter((id) => !this.answered.has(id));
    const asks = open.filter((id) => this.calls.get(id)?.evaluated_permission === "ask");
    const confirmations: UserEvent[] = [];
    for (const id of asks) {
      const call = this.calls.get(id) as WireEvent;
      const decision = await this.peer.askPermission(toolCallOf(call));
      if (decision === "cancelled" || this.cancelled) {
        this.cancel();
        return null;
      }
      this.answered.add(id);
      confirmations.push({ type: "user.tool_confirmation", tool_use_id: id, result: decision });
    }
    if (confirmations.length > 0) {
      try {
        await this.api.send(this.sessionId, confirmations);
      } catch (error) {
        // Answered meanwhile over another client: that committed answer stands, the tail shows it.
        if (!(error instanceof Anthropic.BadRequestError)) throw error;
      }
    }
    return open.length > asks.length ? "end_turn" : null;
  }

  private async interrupt(): Promise<void> {
    if (this.interruptPosted) return;
    this.interruptPosted = true;
    try {
      await this.api.send(this.sessionId, [{ type: "user.interrupt" }]);
    } catch {
      // The session already rests (or ended); the grace timer ends the turn either way.
    }
  }

  private async show(update: SessionUpdate): Promise<void> {
    await this.peer.update(update);
  }
}

function errorMessage(event: WireEvent): string {
  const error = event.error as { message?: unknown } | undefined;
  return typeof error?.message === "string" ? error.message : "the model failed";
}
