/** Pure mapping between the provider-neutral port shapes and OpenAI chat completions. */
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ModelContentBlock, ModelMessage, ModelRequest, ModelStopReason } from "./ports.js";

export function toOpenAIParams(request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = [];
  if (request.system) messages.push({ role: "system", content: request.system });
  for (const message of request.messages) messages.push(...toMessages(message));
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages,
    stream: true,
    // Usage only arrives in streamed responses when asked for, as a final chunk without choices.
    stream_options: { include_usage: true },
    max_completion_tokens: request.maxTokens,
  };
  if (request.tools.length > 0) params.tools = request.tools.map(toTool);
  return params;
}

function toMessages(message: ModelMessage): ChatCompletionMessageParam[] {
  return message.role === "assistant"
    ? [toAssistantMessage(message.content)]
    : toUserMessages(message.content);
}

function toAssistantMessage(blocks: ModelContentBlock[]): ChatCompletionMessageParam {
  const text = blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  const toolCalls = blocks.flatMap((block): ChatCompletionMessageFunctionToolCall[] =>
    block.type === "tool_use"
      ? [
          {
            id: block.id,
            type: "function",
            function: { name: block.name, arguments: JSON.stringify(block.input) },
          },
        ]
      : [],
  );
  if (toolCalls.length === 0) return { role: "assistant", content: text };
  return { role: "assistant", content: text === "" ? null : text, tool_calls: toolCalls };
}

/**
 * Tool results become `tool` messages placed first: the API requires them to follow the
 * assistant message holding the matching tool_calls directly.
 */
function toUserMessages(blocks: ModelContentBlock[]): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [];
  const parts: ChatCompletionContentPart[] = [];
  for (const block of blocks) {
    if (block.type === "tool_result") {
      const text = block.content.map((part) => part.text).join("");
      // Chat completions has no error flag on tool messages, so the model reads it in the text.
      messages.push({
        role: "tool",
        tool_call_id: block.tool_use_id,
        content: block.is_error ? `Error: ${text}` : text,
      });
    } else if (block.type === "text") {
      parts.push({ type: "text", text: block.text });
    } else if (block.type === "image") {
      const url =
        block.source.type === "url"
          ? block.source.url
          : `data:${block.source.media_type};base64,${block.source.data}`;
      parts.push({ type: "image_url", image_url: { url } });
    }
  }
  if (parts.length > 0) {
    // A lone text part is sent as a plain string, which every OpenAI-compatible server accepts.
    const only = parts.length === 1 ? parts[0] : undefined;
    messages.push({ role: "user", content: only?.type === "text" ? only.text : parts });
  }
  return messages;
}

function toTool(spec: ModelRequest["tools"][number]): ChatCompletionTool {
  return {
    type: "function",
    function: { name: spec.name, description: spec.description, parameters: spec.input_schema },
  };
}

export function fromOpenAIFinishReason(
  reason: ChatCompletionChunk.Choice["finish_reason"],
  sawRefusal: boolean,
): ModelStopReason {
  if (reason === "tool_calls" || reason === "function_call") return "tool_use";
  if (reason === "length") return "max_tokens";
  if (reason === "content_filter" || sawRefusal) return "refusal";
  return "end_turn";
}
