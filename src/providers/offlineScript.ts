/**
 * The offline model's answer, decided purely from the request so every run of the same
 * conversation produces the same reply. Streaming, delays and usage live in offlineProvider.ts.
 */
import { createHash } from "node:crypto";
import { DREAMER_SYSTEM_PROMPT, readDreamRequest } from "./dreaming.js";
import { offlineDreamAnswer } from "./offlineDreamer.js";
import { offlineGraderAnswer } from "./offlineGrader.js";
import { GRADER_SYSTEM_PROMPT, readGraderRequest } from "./outcomeGrading.js";
import type { ModelMessage, ModelRequest, ModelResponse, ModelStopReason, ModelToolSpec } from "./ports.js";

export const OFFLINE_PREFIX = "[offline model] ";

const TOOL_REQUEST = /\b(?:call|use|run)\s+(?:the\s+)?(?:tool\s+)?`?([A-Za-z0-9_-]{1,128})`?/gi;

export interface OfflineReply {
  content: ModelResponse["content"];
  stopReason: ModelStopReason;
}

export function offlineReply(request: ModelRequest): OfflineReply {
  const last = request.messages.at(-1);
  const message = last?.role === "user" ? last : undefined;
  // An outcome's grader: answered by the offline grading rule (offlineGrader.ts).
  const graded =
    request.system === GRADER_SYSTEM_PROMPT && message ? readGraderRequest(userText(message)) : null;
  if (graded) return textReply(offlineGraderAnswer(graded));
  // A dream's request: answered by the offline dreaming rule (offlineDreamer.ts).
  const dream =
    request.system?.includes(DREAMER_SYSTEM_PROMPT) && message ? readDreamRequest(userText(message)) : null;
  if (dream) return textReply(offlineDreamAnswer(dream));
  const results = message ? toolResults(message) : [];
  if (results.length > 0) {
    const text = results.map((result) => result.content.map((part) => part.text).join("")).join("\n");
    const label = results.some((result) => result.is_error)
      ? "Tool result received (error): "
      : "Tool result received: ";
    return textReply(OFFLINE_PREFIX + label + text.slice(0, 200));
  }

  const said = message ? userText(message) : "";
  const parallel = parallelCalls(said, request.tools, request.messages.length);
  if (parallel.length > 1) {
    return {
      content: [{ type: "text", text: `${OFFLINE_PREFIX}Calling ${parallel.length} tools.` }, ...parallel],
      stopReason: "tool_use",
    };
  }
  const tool = requestedTool(said, request.tools);
  if (tool) {
    return {
      content: [
        { type: "text", text: `${OFFLINE_PREFIX}Calling ${tool.name}.` },
        {
          type: "tool_use",
          id: offlineToolUseId(request.messages.length, tool.name),
          name: tool.name,
          input: firstJsonObject(said) ?? exampleInput(tool.input_schema),
        },
      ],
      stopReason: "tool_use",
    };
  }

  const trimmed = said.trim();
  return textReply(
    trimmed === "" ? `${OFFLINE_PREFIX}Hello.` : `${OFFLINE_PREFIX}You said: ${trimmed.slice(0, 500)}`,
  );
}

function textReply(text: string): OfflineReply {
  return { content: [{ type: "text", text }], stopReason: "end_turn" };
}

function toolResults(message: ModelMessage) {
  return message.content.flatMap((block) => (block.type === "tool_result" ? [block] : []));
}

function userText(message: ModelMessage): string {
  return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}

/** The first `call/use/run <name>` phrase that names a tool the agent actually has. */
function requestedTool(text: string, tools: ModelToolSpec[]): ModelToolSpec | undefined {
  for (const match of text.matchAll(TOOL_REQUEST)) {
    const tool = tools.find((candidate) => candidate.name === match[1]);
    if (tool) return tool;
  }
  return undefined;
}

/**
 * Several calls in one answer: a message saying "in parallel" asks for one call per
 * `call/use/run <tool> {json}` phrase that names a tool the agent has, each with the JSON object
 * that follows its phrase (before the next one) as input. Fewer than two: the single-call rule.
 */
function parallelCalls(text: string, tools: ModelToolSpec[], conversationLength: number) {
  if (!/\bin parallel\b/i.test(text)) return [];
  const phrases = [...text.matchAll(TOOL_REQUEST)].filter((m) => tools.some((t) => t.name === m[1]));
  return phrases.flatMap((match, i) => {
    const tool = tools.find((t) => t.name === match[1]);
    const end = phrases[i + 1]?.index ?? text.length;
    const input = firstJsonObject(text.slice((match.index ?? 0) + match[0].length, end));
    if (!tool || !input) return [];
    return [
      {
        type: "tool_use" as const,
        id: offlineToolUseId(conversationLength, `${tool.name}#${i}`),
        name: tool.name,
        input,
      },
    ];
  });
}

/** Deterministic so replaying a conversation yields the same tool_use id. */
export function offlineToolUseId(conversationLength: number, toolName: string): string {
  const digest = createHash("sha256").update(`${conversationLength}:${toolName}`).digest("hex");
  return `toolu_offline_${digest.slice(0, 16)}`;
}

/** The first balanced `{...}` span in the text that parses as a JSON object. */
export function firstJsonObject(text: string): Record<string, unknown> | undefined {
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    const end = matchingBrace(text, start);
    if (end === -1) continue;
    try {
      const parsed: unknown = JSON.parse(text.slice(start, end + 1));
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
    } catch {
      // Not JSON after all (e.g. prose in braces); try the next opening brace.
    }
  }
  return undefined;
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Placeholder values for the schema's required properties, so the call passes validation. */
export function exampleInput(schema: Record<string, unknown>): Record<string, unknown> {
  const required = Array.isArray(schema.required) ? schema.required : [];
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const input: Record<string, unknown> = {};
  for (const name of required) {
    if (typeof name !== "string") continue;
    const property = properties[name];
    input[name] = exampleValue(isRecord(property) ? property.type : undefined);
  }
  return input;
}

function exampleValue(type: unknown): unknown {
  // `type` may be a list such as ["string", "null"]; the first non-null entry decides.
  const chosen = Array.isArray(type) ? type.find((entry) => entry !== "null") : type;
  switch (chosen) {
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "example";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
