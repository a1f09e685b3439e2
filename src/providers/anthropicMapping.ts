/** Pure mapping between the provider-neutral port shapes and the Anthropic Messages wire. */
import type {
  Base64ImageSource,
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  StopReason,
  Tool,
} from "@anthropic-ai/sdk/resources/messages";
import type { ModelContentBlock, ModelRequest, ModelStopReason } from "./ports.js";

export function toAnthropicParams(request: ModelRequest): MessageCreateParamsStreaming {
  const params: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages: request.messages.map(
      (message): MessageParam => ({ role: message.role, content: message.content.map(toBlock) }),
    ),
    stream: true,
  };
  // The API rejects an empty system string, and an empty tools list is noise on the wire.
  if (request.system) params.system = request.system;
  if (request.tools.length > 0) params.tools = request.tools.map(toTool);
  return params;
}

function toBlock(block: ModelContentBlock): ContentBlockParam {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return {
        type: "image",
        source:
          block.source.type === "base64"
            ? {
                type: "base64",
                // The port keeps media types open; the API validates the actual value.
                media_type: block.source.media_type as Base64ImageSource["media_type"],
                data: block.source.data,
              }
            : { type: "url", url: block.source.url },
      };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.tool_use_id,
        content: block.content.map((part) => ({ type: "text", text: part.text })),
        is_error: block.is_error,
      };
  }
}

function toTool(spec: ModelRequest["tools"][number]): Tool {
  // The API requires `type: "object"` at the schema root; tolerate specs that leave it implicit.
  return {
    name: spec.name,
    description: spec.description,
    input_schema: { ...spec.input_schema, type: "object" },
  };
}

export function fromAnthropicStopReason(reason: StopReason | null, sawToolUse: boolean): ModelStopReason {
  switch (reason) {
    case "end_turn":
    case "max_tokens":
    case "stop_sequence":
    case "tool_use":
    case "refusal":
      return reason;
    // The context window filling up is, for the runtime, the same as running out of output budget.
    case "model_context_window_exceeded":
      return "max_tokens";
    // pause_turn only happens with server-side tools, which this platform does not request.
    default:
      return sawToolUse ? "tool_use" : "end_turn";
  }
}
