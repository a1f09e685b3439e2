// INTERIM until the fact codec lands on main: decodes the stored fact types this edge reads and
// encodes its domain inputs as the session service takes them today. Replaced by factCodec.ts.
import type { DomainInput } from "../../coordinator/domainInputs.js";
import type { CommittedFact } from "../../coordinator/facts.js";
import type { CommittedTypedFact, FactPayload, IdleReason } from "../../coordinator/factVocabulary.js";
import type { UserInput } from "../../coordinator/inputRules.js";
import type { JsonObject } from "../../kernel/json.js";

const CLIENT_ID = "awaken_client_message_id";

export function interimDecode(f: CommittedFact): CommittedTypedFact {
  const b = f.body as Record<string, unknown>;
  const content = (b.content ?? []) as JsonObject[];
  const place = {
    id: f.id,
    sessionId: f.sessionId,
    threadId: f.threadId,
    seq: f.seq,
    createdAt: f.createdAt,
  };
  const payload = ((): FactPayload => {
    switch (f.type) {
      case "user.message":
        return {
          kind: "user_message",
          content,
          ...(typeof b[CLIENT_ID] === "string" ? { clientMessageId: b[CLIENT_ID] as string } : {}),
        };
      case "agent.message":
        return { kind: "agent_message", content };
      case "agent.tool_use":
      case "agent.mcp_tool_use":
      case "agent.custom_tool_use": {
        const executor =
          f.type === "agent.custom_tool_use" ? "client" : f.type === "agent.mcp_tool_use" ? "mcp" : "server";
        return {
          kind: "tool_call",
          call: {
            id: f.id,
            name: String(b.name),
            input: (b.input ?? {}) as JsonObject,
            executor,
            ...(executor === "client"
              ? {}
              : {
                  permission: {
                    decision: b.evaluated_permission as "allow",
                    evaluation: (b.evaluation ?? null) as JsonObject | null,
                  },
                }),
          },
        };
      }
      case "agent.tool_result":
      case "agent.mcp_tool_result":
      case "user.custom_tool_result":
      case "user.tool_result":
        return {
          kind: "tool_result",
          callId: String(b.tool_use_id ?? b.mcp_tool_use_id ?? b.custom_tool_use_id),
          executor: f.type === "user.custom_tool_result" ? "client" : "server",
          by: f.type.startsWith("user.") ? "client" : "server",
          content,
          isError: b.is_error === true,
        };
      case "user.tool_confirmation":
        return {
          kind: "tool_confirmation",
          callId: String(b.tool_use_id),
          allowed: b.result === "allow",
          denyMessage: (b.deny_message ?? null) as string | null,
        };
      case "user.interrupt":
        return { kind: "interrupt" };
      case "session.status_running":
        return { kind: "status_running" };
      case "session.status_idle":
        return { kind: "status_idle", reason: idleReason(b.stop_reason as Record<string, unknown>) };
      case "session.status_terminated":
        return { kind: "status_terminated" };
      case "session.deleted":
        return { kind: "session_deleted" };
      case "span.model_request_start":
        return { kind: "model_request_start", provider: "", model: "" };
      case "session.error": {
        const e = b.error as Record<string, unknown>;
        return {
          kind: "error",
          errorType: String(e.type),
          message: String(e.message),
          retryStatus: "exhausted",
          extra: {},
        };
      }
      default:
        return { kind: "unknown", type: f.type, body: f.body };
    }
  })();
  return { ...place, ...payload } as CommittedTypedFact;
}

function idleReason(stop: Record<string, unknown> | undefined): IdleReason {
  if (stop?.type === "requires_action") return { kind: "waiting", callIds: stop.event_ids as string[] };
  if (stop?.type === "retries_exhausted") return { kind: "retries_exhausted" };
  return { kind: "end_turn" };
}

export function interimEncode(input: DomainInput): UserInput {
  switch (input.kind) {
    case "message":
      return {
        type: "user.message",
        body: {
          content: input.content,
          ...(input.clientMessageId ? { [CLIENT_ID]: input.clientMessageId } : {}),
        },
      };
    case "tool_result":
      return {
        type: "user.custom_tool_result",
        body: { custom_tool_use_id: input.callId, content: input.content, is_error: input.isError },
      };
    case "tool_confirmation":
      return {
        type: "user.tool_confirmation",
        body: {
          tool_use_id: input.callId,
          result: input.allowed ? "allow" : "deny",
          ...(input.denyMessage ? { deny_message: input.denyMessage } : {}),
        },
      };
    case "interrupt":
      return { type: "user.interrupt", body: {} };
    default:
      return { type: "system.message", body: { content: input.content } };
  }
}
