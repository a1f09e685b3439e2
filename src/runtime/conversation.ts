import type { CommittedFact } from "../coordinator/facts.js";
import type { ModelContentBlock, ModelMessage } from "../providers/ports.js";

/**
 * Rebuilds the model conversation from committed facts alone, so any worker (after a crash, on
 * another machine) asks the model exactly what the history says. Tool uses are addressed by the
 * fact id, which is the id the client answers.
 */
export function buildConversation(facts: readonly CommittedFact[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  const unanswered = new Set<string>();

  const add = (role: ModelMessage["role"], blocks: ModelContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };

  const closeUnanswered = (reason: string) => {
    if (unanswered.size === 0) return;
    add(
      "user",
      [...unanswered].map((id) => ({
        type: "tool_result" as const,
        tool_use_id: id,
        content: [{ type: "text" as const, text: reason }],
        is_error: true,
      })),
    );
    unanswered.clear();
  };

  for (const fact of inModelOrder(facts)) {
    const body = fact.body;
    switch (fact.type) {
      case "user.message":
        add("user", userContent(body.content));
        break;
      case "system.message":
        add(
          "user",
          userContent(body.content).map((b) =>
            b.type === "text" ? { ...b, text: `[system message] ${b.text}` } : b,
          ),
        );
        break;
      case "agent.message":
        add("assistant", textBlocks(body.content));
        break;
      case "agent.custom_tool_use":
      case "agent.tool_use":
      case "agent.mcp_tool_use":
        add("assistant", [
          { type: "tool_use", id: fact.id, name: String(body.name), input: asObject(body.input) },
        ]);
        unanswered.add(fact.id);
        break;
      case "user.custom_tool_result":
      case "user.tool_result":
      case "agent.tool_result":
      case "agent.mcp_tool_result": {
        const id = String(
          fact.type === "user.custom_tool_result"
            ? body.custom_tool_use_id
            : fact.type === "agent.mcp_tool_result"
              ? body.mcp_tool_use_id
              : body.tool_use_id,
        );
        unanswered.delete(id);
        add("user", [
          {
            type: "tool_result",
            tool_use_id: id,
            content: resultText(body.content),
            is_error: body.is_error === true,
          },
        ]);
        break;
      }
      case "user.interrupt":
        closeUnanswered("The user interrupted before this tool returned a result.");
        break;
    }
  }
  // Providers require tool results to open the user turn that follows the tool uses.
  for (const message of messages) {
    if (message.role === "user") {
      message.content.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"));
    }
  }
  return messages;
}

const INPUT_TYPES = new Set(["user.message", "system.message", "user.custom_tool_result", "user.interrupt"]);

/**
 * History order is commit order, but input committed while a model request was open reached the
 * model only after that request's answer (which is committed with the request's end). Such input is
 * moved after the end, so the conversation reads as the model lived it and never ends on an answer
 * that precedes the input it did not see.
 */
function inModelOrder(facts: readonly CommittedFact[]): CommittedFact[] {
  const ordered: CommittedFact[] = [];
  let open: string | null = null;
  let held: CommittedFact[] = [];
  const release = () => {
    ordered.push(...held);
    held = [];
  };
  for (const fact of facts) {
    if (fact.type === "span.model_request_start") {
      release();
      open = fact.id;
      ordered.push(fact);
    } else if (fact.type === "span.model_request_end" && fact.body.model_request_start_id === open) {
      ordered.push(fact);
      release();
      open = null;
    } else if (open !== null && INPUT_TYPES.has(fact.type)) {
      held.push(fact);
    } else {
      ordered.push(fact);
    }
  }
  release();
  return ordered;
}

function userContent(content: unknown): ModelContentBlock[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: ModelContentBlock[] = [];
  for (const block of content) {
    if (!block || typeof block !== "object") continue;
    const b = block as Record<string, unknown>;
    if (b.type === "text" && typeof b.text === "string" && hasText(b.text))
      blocks.push({ type: "text", text: b.text });
    else if (b.type === "image") {
      const source = b.source as Record<string, unknown> | undefined;
      if (
        source?.type === "base64" &&
        typeof source.data === "string" &&
        typeof source.media_type === "string"
      ) {
        blocks.push({
          type: "image",
          source: { type: "base64", media_type: source.media_type, data: source.data },
        });
      } else if (source?.type === "url" && typeof source.url === "string") {
        blocks.push({ type: "image", source: { type: "url", url: source.url } });
      } else
        blocks.push({ type: "text", text: "[an image this server cannot pass to the model was omitted]" });
    } else if (b.type === "document") {
      const source = b.source as Record<string, unknown> | undefined;
      if (source?.type === "text" && typeof source.data === "string") {
        const title = typeof b.title === "string" ? `${b.title}\n` : "";
        blocks.push({ type: "text", text: `${title}${source.data}` });
      } else
        blocks.push({ type: "text", text: "[a document this server cannot pass to the model was omitted]" });
    }
  }
  return blocks;
}

function textBlocks(content: unknown): ModelContentBlock[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter(
      (b): b is { type: "text"; text: string } =>
        b?.type === "text" && typeof b.text === "string" && hasText(b.text),
    )
    .map((b) => ({ type: "text", text: b.text }));
}

function resultText(content: unknown): Array<{ type: "text"; text: string }> {
  if (typeof content === "string")
    return [{ type: "text", text: hasText(content) ? content : "(no output)" }];
  if (!Array.isArray(content) || content.length === 0) return [{ type: "text", text: "(no output)" }];
  return content.map((b) =>
    b?.type === "text" && typeof b.text === "string"
      ? { type: "text" as const, text: hasText(b.text) ? b.text : "(no output)" }
      : { type: "text" as const, text: `[${String(b?.type ?? "unknown")} content omitted]` },
  );
}

/** Providers reject empty and whitespace-only text blocks (models do emit e.g. "\n\n" before a tool call). */
function hasText(text: string): boolean {
  return text.trim() !== "";
}

function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
