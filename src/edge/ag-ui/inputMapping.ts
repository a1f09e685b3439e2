import type { Message, ResumeEntry, RunAgentInput } from "@ag-ui/core";
import type { DomainInput } from "../../coordinator/domainInputs.js";
import type { PendingAction } from "../../coordinator/facts.js";
import type { ContentBlock } from "../../coordinator/factVocabulary.js";
import { callIdOfInterrupt } from "./interruptIds.js";
import { RunRefusal } from "./runRefusal.js";

/** What the thread already holds, as far as mapping a request needs to know. */
export interface ThreadInputContext {
  /** The `clientMessageId`s of the committed user messages. */
  committedUserMessageIds: ReadonlySet<string>;
  /** The answers the session waits for. */
  pending: readonly PendingAction[];
  /** The custom tools of the session's pinned agent (the only tools a client may run). */
  customToolNames: ReadonlySet<string>;
  /** Calls whose confirmation is already committed (answered here or over another protocol). */
  confirmedCallIds: ReadonlySet<string>;
}

const DENY_MESSAGE_MAX = 2_000;

/**
 * Maps one AG-UI request to domain inputs. The client re-sends its whole message list on every
 * run, so only what the thread does not hold yet is entered: the last user message when its id is
 * not committed, tool messages answering calls still pending, and resume entries answering the
 * approvals still pending. Everything the mapping cannot honour throws a `RunRefusal` before any
 * input is produced, so a refused request writes nothing.
 */
export function mapRunInput(input: RunAgentInput, thread: ThreadInputContext): DomainInput[] {
  refuseUnsupported(input, thread);
  return [
    ...confirmationsOf(input.resume ?? [], thread),
    ...toolResultsOf(input.messages, thread),
    ...newUserMessage(input.messages, thread),
  ];
}

function refuseUnsupported(input: RunAgentInput, thread: ThreadInputContext): void {
  if (!isEmpty(input.state)) {
    throw new RunRefusal(
      "state_unsupported",
      "This agent keeps no AG-UI state: send `state` empty ({}), or leave it out.",
    );
  }
  if (!isEmpty(input.forwardedProps)) {
    throw new RunRefusal(
      "forwarded_props_unsupported",
      "This agent takes no forwardedProps: send `forwardedProps` empty ({}), or leave it out.",
    );
  }
  if (input.context.length > 0) {
    throw new RunRefusal(
      "context_unsupported",
      "This agent takes no AG-UI context entries: put what the agent should know in a user message.",
    );
  }
  const unknown = input.tools.map((tool) => tool.name).filter((name) => !thread.customToolNames.has(name));
  if (unknown.length > 0) {
    const defined = [...thread.customToolNames];
    throw new RunRefusal(
      "tool_not_defined",
      `The agent defines no custom tool named ${unknown.map((n) => JSON.stringify(n)).join(", ")}; ` +
        (defined.length > 0
          ? `its custom tools are ${defined.map((n) => JSON.stringify(n)).join(", ")}.`
          : "it has no custom tools. Add them to the agent's definition first."),
    );
  }
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}

function confirmationsOf(resume: readonly ResumeEntry[], thread: ThreadInputContext): DomainInput[] {
  const seen = new Set<string>();
  return resume.flatMap((entry): DomainInput[] => {
    if (seen.has(entry.interruptId)) {
      throw new RunRefusal(
        "interrupt_answered_twice",
        `resume names interrupt ${JSON.stringify(entry.interruptId)} twice; answer each interrupt once.`,
      );
    }
    seen.add(entry.interruptId);
    const callId = callIdOfInterrupt(entry.interruptId);
    // Answered already (by this client, or over another protocol): the committed answer stands and
    // nothing is entered. The run then reports the thread as it is, which clears the client's
    // pending interrupts; refusing it would leave a client that cannot run without a resume stuck.
    if (callId !== null && thread.confirmedCallIds.has(callId)) return [];
    const waiting =
      callId !== null && thread.pending.some((p) => p.eventId === callId && p.kind === "confirmation");
    if (!waiting || callId === null) {
      throw new RunRefusal(
        "interrupt_not_pending",
        `Interrupt ${JSON.stringify(entry.interruptId)} is not waiting for an answer on this thread: ` +
          "it was already answered, the turn was interrupted, or it was never issued here.",
      );
    }
    const payload = entry.status === "resolved" ? entry.payload : undefined;
    const allowed = entry.status === "resolved" && payload !== false && approvedOf(payload) !== false;
    return [
      {
        kind: "tool_confirmation",
        callId,
        allowed,
        denyMessage: allowed ? null : denyMessageOf(payload),
      },
    ];
  });
}

function approvedOf(payload: unknown): unknown {
  return isRecord(payload) ? payload.approved : undefined;
}

function denyMessageOf(payload: unknown): string | null {
  if (!isRecord(payload)) return null;
  const text = [payload.message, payload.reason].find((v): v is string => typeof v === "string");
  const trimmed = text?.trim();
  return trimmed ? trimmed.slice(0, DENY_MESSAGE_MAX) : null;
}

function toolResultsOf(messages: readonly Message[], thread: ThreadInputContext): DomainInput[] {
  const answered = new Set<string>();
  const inputs: DomainInput[] = [];
  for (const message of messages) {
    if (message.role !== "tool") continue;
    const callId = message.toolCallId;
    const owed = thread.pending.some((p) => p.eventId === callId && p.kind === "client_tool_result");
    if (!owed || answered.has(callId)) continue;
    answered.add(callId);
    const text = textOf(message.content, `the tool message ${JSON.stringify(message.id)}`);
    const error = message.error;
    const isError = typeof error === "string";
    inputs.push({
      kind: "tool_result",
      callId,
      content: [{ type: "text", text: text === "" && isError ? error : text }],
      isError,
    });
  }
  return inputs;
}

function newUserMessage(messages: readonly Message[], thread: ThreadInputContext): DomainInput[] {
  // Only the list's last user message can be new: earlier ones were entered by earlier runs (or
  // refused by them), and entering them now would put them after answers given since.
  const last = messages.filter((m) => m.role === "user").at(-1);
  if (last?.role !== "user" || thread.committedUserMessageIds.has(last.id)) return [];
  const text = textOf(last.content, `the user message ${JSON.stringify(last.id)}`);
  const content: ContentBlock[] = [{ type: "text", text }];
  return [{ kind: "message", content, clientMessageId: last.id }];
}

type MessageContent = Extract<Message, { role: "user" }>["content"];

/** Text content only: a part of another kind (image, audio, document…) is refused, not dropped. */
function textOf(content: MessageContent, what: string): string {
  if (typeof content === "string") return content;
  const texts: string[] = [];
  for (const part of content) {
    if (part.type !== "text") {
      throw new RunRefusal(
        "content_unsupported",
        `${what} carries a ${JSON.stringify(part.type)} part; this agent accepts text parts only.`,
      );
    }
    texts.push(part.text);
  }
  return texts.join("\n");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
