import type { JsonObject } from "../../kernel/json.js";
import type { Fact } from "../facts.js";
import type { IdleReason, RetryStatus, TypedFact } from "../factVocabulary.js";
import { object, text } from "./bodyValues.js";
import { STORED_TYPE } from "./storedTypes.js";
import { decodeUsage, encodeSpanUsage, encodeUsage } from "./usageCodec.js";

type Of<K extends TypedFact["kind"]> = Extract<TypedFact, { kind: K }>;
export type SessionFact = Of<
  | "status_running"
  | "status_idle"
  | "status_rescheduled"
  | "status_terminated"
  | "error"
  | "usage"
  | "model_request_start"
  | "model_request_end"
  | "session_updated"
  | "session_deleted"
>;

const RETRY_STATUSES: readonly string[] = ["retrying", "exhausted", "terminal"];

export function idleReason(stopReason: JsonObject): IdleReason {
  const type = text(stopReason.type);
  switch (type) {
    case "end_turn":
      return { kind: "turn_ended" };
    case "retries_exhausted":
    case "refusal":
    case "budget_reached":
      return { kind: type };
    case "requires_action":
      return {
        kind: "waiting",
        callIds: Array.isArray(stopReason.event_ids) ? stopReason.event_ids.map((v) => text(v)) : [],
      };
    default:
      return { kind: "other", type };
  }
}

export function stopReason(reason: IdleReason): JsonObject {
  switch (reason.kind) {
    case "turn_ended":
      return { type: "end_turn" };
    case "waiting":
      return { type: "requires_action", event_ids: reason.callIds };
    case "other":
      return { type: reason.type };
    default:
      return { type: reason.kind };
  }
}

export const sessionDecoders: Record<string, (f: Fact) => SessionFact> = {
  [STORED_TYPE.status_running]: ({ id }) => ({ id, kind: "status_running" }),
  [STORED_TYPE.status_idle]: ({ id, body }) => ({
    id,
    kind: "status_idle",
    reason: idleReason(object(body.stop_reason)),
  }),
  [STORED_TYPE.status_rescheduled]: ({ id }) => ({ id, kind: "status_rescheduled" }),
  [STORED_TYPE.status_terminated]: ({ id }) => ({ id, kind: "status_terminated" }),
  [STORED_TYPE.error]: ({ id, body }) => {
    const { type, message, retry_status, ...extra } = object(body.error);
    const retry = text(object(retry_status).type);
    return {
      id,
      kind: "error",
      errorType: text(type),
      message: text(message),
      retryStatus: (RETRY_STATUSES.includes(retry) ? retry : "terminal") as RetryStatus,
      extra,
    };
  },
  [STORED_TYPE.usage]: ({ id, body }) => {
    const usage = object(body.usage);
    const amount = object(usage.list_cost).amount;
    return {
      id,
      kind: "usage",
      usage: decodeUsage(usage),
      ...(typeof amount === "string" ? { listCostCents: amount } : {}),
      ...(typeof usage.active_seconds === "number" ? { activeSeconds: usage.active_seconds } : {}),
      ...(body.budget !== undefined ? { budget: body.budget === null ? null : object(body.budget) } : {}),
    };
  },
  [STORED_TYPE.model_request_start]: ({ id, body }) => ({
    id,
    kind: "model_request_start",
    provider: text(body.provider),
    model: text(body.model),
    ...(typeof body.context_seq === "number" ? { contextSeq: body.context_seq } : {}),
    ...(typeof body.started_at === "number" ? { startedAt: body.started_at } : {}),
  }),
  [STORED_TYPE.model_request_end]: ({ id, body }) => ({
    id,
    kind: "model_request_end",
    startId: text(body.model_request_start_id),
    isError: body.is_error === true,
    provider: text(body.provider),
    model: text(body.model),
    usage: decodeUsage(body.model_usage),
  }),
  [STORED_TYPE.session_updated]: ({ id, body }) => ({ id, kind: "session_updated", changes: body }),
  [STORED_TYPE.session_deleted]: ({ id }) => ({ id, kind: "session_deleted" }),
};

export function encodeSession(f: SessionFact): Fact {
  const type = STORED_TYPE[f.kind];
  switch (f.kind) {
    case "status_idle":
      return { id: f.id, type, body: { stop_reason: stopReason(f.reason), stop_details: null } };
    case "error":
      return {
        id: f.id,
        type,
        body: {
          error: { type: f.errorType, message: f.message, retry_status: { type: f.retryStatus }, ...f.extra },
        },
      };
    case "usage":
      return {
        id: f.id,
        type,
        body: {
          usage: {
            ...encodeUsage(f.usage),
            ...(f.activeSeconds !== undefined ? { active_seconds: f.activeSeconds } : {}),
            ...(f.listCostCents !== undefined
              ? { list_cost: { amount: f.listCostCents, currency: "USD" } }
              : {}),
          },
          ...(f.budget !== undefined ? { budget: f.budget } : {}),
        },
      };
    case "model_request_start":
      return {
        id: f.id,
        type,
        body: {
          provider: f.provider,
          model: f.model,
          ...(f.contextSeq !== undefined ? { context_seq: f.contextSeq } : {}),
          ...(f.startedAt !== undefined ? { started_at: f.startedAt } : {}),
        },
      };
    case "model_request_end":
      return {
        id: f.id,
        type,
        body: {
          model_request_start_id: f.startId,
          is_error: f.isError,
          provider: f.provider,
          model: f.model,
          model_usage: encodeSpanUsage(f.usage),
        },
      };
    case "session_updated":
      return { id: f.id, type, body: f.changes };
    default:
      return { id: f.id, type, body: {} };
  }
}
