import type { JsonObject } from "../../kernel/json.js";
import type { Fact } from "../facts.js";
import type { PermissionVerdict, ResultField, ToolExecutor, TypedFact } from "../factVocabulary.js";
import { blocks, defined, object, text } from "./bodyValues.js";
import { STORED_TYPE, TOOL_CALL_TYPE, TOOL_RESULT_TYPE } from "./storedTypes.js";

type Of<K extends TypedFact["kind"]> = Extract<TypedFact, { kind: K }>;
export type ToolFact = Of<"tool_call" | "tool_result" | "tool_confirmation" | "thread_ask">;

/** A harness's own tool calls and results are stored as the built-in ones, marked by this field. */
export const HARNESS_FIELD = "awaken_harness";

function callDecoder(stored: ToolExecutor) {
  return ({ id, body }: Fact): ToolFact => {
    const executor: ToolExecutor = stored === "server" && body[HARNESS_FIELD] === true ? "harness" : stored;
    const permission: PermissionVerdict | undefined =
      typeof body.evaluated_permission === "string"
        ? {
            decision: body.evaluated_permission as PermissionVerdict["decision"],
            evaluation: body.evaluation === null ? null : object(body.evaluation),
          }
        : undefined;
    const call = {
      id,
      name: text(body.name),
      input: object(body.input),
      executor,
      ...(executor === "mcp" ? { mcpServer: text(body.mcp_server_name) } : {}),
      ...(permission ? { permission } : {}),
    };
    // A child's call cross-posted on the primary names the thread it waits in.
    return typeof body.session_thread_id === "string"
      ? { id, kind: "thread_ask", thread: body.session_thread_id, call }
      : { id, kind: "tool_call", call };
  };
}

/** Results name their call under a field that depends on the stored type. */
function resultDecoder(
  stored: ToolExecutor,
  by: "server" | "client",
  callField: "custom_tool_use_id" | "tool_use_id" | "mcp_tool_use_id",
) {
  return ({ id, body }: Fact): ToolFact => {
    const executor: ToolExecutor = stored === "server" && body[HARNESS_FIELD] === true ? "harness" : stored;
    const unset: ResultField[] = [];
    if (!("content" in body)) unset.push("content");
    if (!("is_error" in body)) unset.push("isError");
    return {
      id,
      kind: "tool_result",
      callId: text(body[callField]),
      executor,
      by,
      content: blocks(body.content),
      isError: body.is_error === true,
      ...(unset.length > 0 ? { unset } : {}),
      ...routedTo(body),
    };
  };
}

export const toolDecoders: Record<string, (f: Fact) => ToolFact> = {
  [TOOL_CALL_TYPE.server]: callDecoder("server"),
  [TOOL_CALL_TYPE.client]: callDecoder("client"),
  [TOOL_CALL_TYPE.mcp]: callDecoder("mcp"),
  [TOOL_RESULT_TYPE.clientCallByClient]: resultDecoder("client", "client", "custom_tool_use_id"),
  [TOOL_RESULT_TYPE.serverCallByClient]: resultDecoder("server", "client", "tool_use_id"),
  [TOOL_RESULT_TYPE.serverCallByServer]: resultDecoder("server", "server", "tool_use_id"),
  [TOOL_RESULT_TYPE.mcpCallByServer]: resultDecoder("mcp", "server", "mcp_tool_use_id"),
  [STORED_TYPE.tool_confirmation]: ({ id, body }) => ({
    id,
    kind: "tool_confirmation",
    callId: text(body.tool_use_id),
    allowed: body.result === "allow",
    denyMessage: typeof body.deny_message === "string" ? body.deny_message : null,
    ...routedTo(body),
  }),
};

/** The child thread an answer was routed to, when it names one. */
const routedTo = (body: Fact["body"]): { thread?: string } =>
  typeof body.session_thread_id === "string" ? { thread: body.session_thread_id } : {};

export function encodeTool(f: ToolFact): Fact {
  switch (f.kind) {
    case "tool_call":
    case "thread_ask": {
      const { call } = f;
      const thread = f.kind === "thread_ask" ? f.thread : undefined;
      const verdict = {
        evaluated_permission: call.permission?.decision,
        evaluation: call.permission ? call.permission.evaluation : undefined,
      };
      const body =
        call.executor === "client"
          ? { name: call.name, input: call.input }
          : call.executor === "mcp"
            ? defined({ name: call.name, mcp_server_name: call.mcpServer, input: call.input, ...verdict })
            : call.executor === "harness"
              ? defined({ name: call.name, input: call.input, ...verdict, [HARNESS_FIELD]: true })
              : defined({ name: call.name, input: call.input, ...verdict });
      return {
        id: f.id,
        type: TOOL_CALL_TYPE[call.executor === "harness" ? "server" : call.executor],
        body: thread === undefined ? body : { ...body, session_thread_id: thread },
      };
    }
    case "tool_result": {
      const [type, callField] = resultEncoding(f.executor, f.by);
      const unset = new Set(f.unset ?? []);
      const body: JsonObject = defined({
        [callField]: f.callId,
        content: unset.has("content") ? undefined : f.content,
        is_error: unset.has("isError") ? undefined : f.isError,
        session_thread_id: f.thread,
        [HARNESS_FIELD]: f.executor === "harness" ? true : undefined,
      });
      return { id: f.id, type, body };
    }
    case "tool_confirmation":
      return {
        id: f.id,
        type: STORED_TYPE.tool_confirmation,
        body: defined({
          tool_use_id: f.callId,
          result: f.allowed ? "allow" : "deny",
          deny_message: f.denyMessage ?? undefined,
          session_thread_id: f.thread,
        }),
      };
  }
}

function resultEncoding(executor: ToolExecutor, by: "server" | "client"): [string, string] {
  if (executor === "client" && by === "client")
    return [TOOL_RESULT_TYPE.clientCallByClient, "custom_tool_use_id"];
  if (executor === "server" && by === "client") return [TOOL_RESULT_TYPE.serverCallByClient, "tool_use_id"];
  if ((executor === "server" || executor === "harness") && by === "server")
    return [TOOL_RESULT_TYPE.serverCallByServer, "tool_use_id"];
  if (executor === "mcp" && by === "server") return [TOOL_RESULT_TYPE.mcpCallByServer, "mcp_tool_use_id"];
  // A custom tool's result written by the server, or an MCP result from a client, has no stored form.
  throw new Error(`no stored encoding for a ${executor} call's result by the ${by}`);
}
