import type { CommittedTypedFact } from "../coordinator/factVocabulary.js";
import type { JsonObject } from "../kernel/json.js";
import type { ModelContentBlock, ModelMessage } from "../providers/ports.js";
import { MEMORY_WRITTEN_BACK } from "./toolFacts.js";

/** How the model is told that a compaction's summary stands for the earlier conversation. */
export const SUMMARY_PREFIX = "[summary of the earlier conversation]\n";

/**
 * Rebuilds the model conversation from committed facts alone, so any worker (after a crash, on
 * another machine) asks the model exactly what the history says. Tool uses are addressed by the
 * fact id, which is the id the client answers. `summary`, from a compaction, opens the
 * conversation in place of the facts it replaced.
 */
export function buildConversation(
  facts: readonly CommittedTypedFact[],
  summary: string | null = null,
): ModelMessage[] {
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

  if (summary !== null) add("user", [{ type: "text", text: `${SUMMARY_PREFIX}${summary}` }]);
  for (const fact of inModelOrder(facts)) {
    switch (fact.kind) {
      case "user_message":
        add("user", userContent(fact.content));
        break;
      case "system_message":
        add(
          "user",
          userContent(fact.content).map((b) =>
            b.type === "text" ? { ...b, text: `[system message] ${b.text}` } : b,
          ),
        );
        break;
      case "agent_message":
        add("assistant", textBlocks(fact.content));
        break;
      case "tool_call":
        add("assistant", [{ type: "tool_use", id: fact.id, name: fact.call.name, input: fact.call.input }]);
        unanswered.add(fact.id);
        break;
      case "tool_result":
        unanswered.delete(fact.callId);
        add("user", [
          {
            type: "tool_result",
            tool_use_id: fact.callId,
            content: resultText(fact.content),
            is_error: fact.isError,
          },
        ]);
        break;
      case "interrupt":
        closeUnanswered("The user interrupted before this tool returned a result.");
        break;
      case "outcome_defined":
      case "outcome_evaluation_end": {
        const said = outcomeText(fact);
        if (said !== null) add("user", [{ type: "text", text: said }]);
        break;
      }
      case "internal": {
        const notes = memoryNotesToTell(fact.type, fact.body);
        if (notes.length > 0) add("user", [{ type: "text", text: `[memory] ${notes.join("\n[memory] ")}` }]);
        break;
      }
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

/**
 * What a memory write-back outside a tool step has to tell the agent (changes that did not take):
 * the model reads it in its next request. Notes said in a tool result are read there instead.
 */
function memoryNotesToTell(type: string, body: JsonObject): string[] {
  if (type !== MEMORY_WRITTEN_BACK || body.told_in !== "next_request" || !Array.isArray(body.notes))
    return [];
  return body.notes.filter((note): note is string => typeof note === "string");
}

/**
 * What the agent reads of an outcome: its task when defined, and the grader's feedback when an
 * attempt needs revision or the evaluations ran out (never the rubric: that is the grader's).
 */
function outcomeText(fact: CommittedTypedFact): string | null {
  if (fact.kind === "outcome_defined") {
    return `[outcome] ${fact.description}\n(A grader will evaluate the result of your work against a rubric.)`;
  }
  if (fact.kind !== "outcome_evaluation_end") return null;
  if (fact.result === "needs_revision") {
    return `[grader] Your attempt needs revision: ${fact.explanation}\nRevise your work to address this.`;
  }
  if (fact.result === "max_iterations_reached") {
    return (
      `[grader] The evaluations ran out with the rubric still unmet: ${fact.explanation}\n` +
      "No further evaluation will run: briefly acknowledge where the work stands."
    );
  }
  return null;
}

/** Input a client gives (a client's tool result too): what the model reads in the next request. */
function isInput(fact: CommittedTypedFact): boolean {
  return (
    fact.kind === "user_message" ||
    fact.kind === "system_message" ||
    fact.kind === "interrupt" ||
    fact.kind === "outcome_defined" ||
    (fact.kind === "tool_result" && fact.executor === "client")
  );
}

/**
 * History order is commit order, but input committed while a model request was open reached the
 * model only after that request's answer (which is committed with the request's end). Such input is
 * moved after the end, so the conversation reads as the model lived it and never ends on an answer
 * that precedes the input it did not see. A start committed with its answer records the version
 * its request saw: input committed after that version, though before the start, is moved the same way.
 */
function inModelOrder(facts: readonly CommittedTypedFact[]): CommittedTypedFact[] {
  const unseenBy = unseenInput(facts);
  /** Input a later-committed request did not see, by that request's start: it goes after its end. */
  const deferred = new Map<string, CommittedTypedFact[]>();
  const ordered: CommittedTypedFact[] = [];
  let open: string | null = null;
  let held: CommittedTypedFact[] = [];
  const release = () => {
    ordered.push(...held);
    held = [];
  };
  for (const fact of facts) {
    const startId = unseenBy.get(fact.id);
    if (startId !== undefined) {
      deferred.set(startId, [...(deferred.get(startId) ?? []), fact]);
    } else if (fact.kind === "model_request_start") {
      release();
      open = fact.id;
      ordered.push(fact);
    } else if (fact.kind === "model_request_end" && fact.startId === open) {
      ordered.push(fact, ...(deferred.get(open) ?? []));
      deferred.delete(open);
      release();
      open = null;
    } else if (open !== null && isInput(fact)) {
      held.push(fact);
    } else {
      ordered.push(fact);
    }
  }
  release();
  for (const rest of deferred.values()) ordered.push(...rest);
  return ordered;
}

/** Input committed after the version a later-committed span start says its request saw, by that start. */
function unseenInput(facts: readonly CommittedTypedFact[]): Map<string, string> {
  const unseen = new Map<string, string>();
  for (let i = 0; i < facts.length; i++) {
    const start = facts[i];
    if (start?.kind !== "model_request_start" || start.contextSeq === undefined) continue;
    for (let j = i - 1; j >= 0; j--) {
      const fact = facts[j];
      if (!fact || fact.seq <= start.contextSeq) break;
      if (isInput(fact)) unseen.set(fact.id, start.id);
    }
  }
  return unseen;
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
