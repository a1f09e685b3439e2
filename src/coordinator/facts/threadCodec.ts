import type { JsonValue } from "../../kernel/json.js";
import type { Fact } from "../facts.js";
import type { ThreadTransition, TypedFact } from "../factVocabulary.js";
import { blocks, object, text } from "./bodyValues.js";
import { idleReason, stopReason } from "./sessionCodec.js";
import { STORED_TYPE, THREAD_STATUS_TYPE } from "./storedTypes.js";

// The facts of a session's threads: a child's creation and status changes (on its parent's history)
// and the messages agents send each other. Stored bodies are the wire's fields, as the others are.

type Of<K extends TypedFact["kind"]> = Extract<TypedFact, { kind: K }>;
export type ThreadFact = Of<
  "thread_created" | "thread_status" | "thread_message_sent" | "thread_message_received"
>;

/** An agent name that may be absent (the primary agent's): absent or null reads as null. */
const optionalName = (value: JsonValue | undefined): string | null =>
  typeof value === "string" ? value : null;

function statusDecoder(transition: (body: Fact["body"]) => ThreadTransition) {
  return ({ id, body }: Fact): ThreadFact => ({
    id,
    kind: "thread_status",
    thread: text(body.session_thread_id),
    agentName: text(body.agent_name),
    transition: transition(body),
  });
}

export const threadDecoders: Record<string, (f: Fact) => ThreadFact> = {
  [STORED_TYPE.thread_created]: ({ id, body }) => ({
    id,
    kind: "thread_created",
    thread: text(body.session_thread_id),
    agentName: text(body.agent_name),
    workflowRun: optionalName(body.workflow_run_id),
  }),
  [THREAD_STATUS_TYPE.running]: statusDecoder(() => ({ to: "running" })),
  [THREAD_STATUS_TYPE.idle]: statusDecoder((body) => ({
    to: "idle",
    reason: idleReason(object(body.stop_reason)),
  })),
  [THREAD_STATUS_TYPE.rescheduled]: statusDecoder(() => ({ to: "rescheduled" })),
  [THREAD_STATUS_TYPE.terminated]: statusDecoder(() => ({ to: "terminated" })),
  [STORED_TYPE.thread_message_sent]: ({ id, body }) => ({
    id,
    kind: "thread_message_sent",
    toThread: text(body.to_session_thread_id),
    toAgentName: optionalName(body.to_agent_name),
    content: blocks(body.content),
  }),
  [STORED_TYPE.thread_message_received]: ({ id, body }) => ({
    id,
    kind: "thread_message_received",
    fromThread: text(body.from_session_thread_id),
    fromAgentName: optionalName(body.from_agent_name),
    content: blocks(body.content),
  }),
};

export function encodeThread(f: ThreadFact): Fact {
  switch (f.kind) {
    case "thread_created":
      return {
        id: f.id,
        type: STORED_TYPE.thread_created,
        body: { session_thread_id: f.thread, agent_name: f.agentName, workflow_run_id: f.workflowRun },
      };
    case "thread_status": {
      const head = { session_thread_id: f.thread, agent_name: f.agentName };
      const body =
        f.transition.to === "idle"
          ? { ...head, stop_reason: stopReason(f.transition.reason), stop_details: null }
          : head;
      return { id: f.id, type: THREAD_STATUS_TYPE[f.transition.to], body };
    }
    case "thread_message_sent":
      return {
        id: f.id,
        type: STORED_TYPE.thread_message_sent,
        body: {
          content: f.content,
          to_session_thread_id: f.toThread,
          // Absent, not null, for the primary agent (as the wire leaves it out).
          ...(f.toAgentName !== null ? { to_agent_name: f.toAgentName } : {}),
        },
      };
    case "thread_message_received":
      return {
        id: f.id,
        type: STORED_TYPE.thread_message_received,
        body: {
          content: f.content,
          from_session_thread_id: f.fromThread,
          ...(f.fromAgentName !== null ? { from_agent_name: f.fromAgentName } : {}),
        },
      };
  }
}
