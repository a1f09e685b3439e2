import type { TypedFact } from "../coordinator/factVocabulary.js";
import type { LiveEvidence } from "../coordinator/ports.js";
import type { ModelStreamEvent } from "../providers/ports.js";

/**
 * Turns one model request's stream events into live previews. Every preview carries the id of the
 * fact it becomes, chosen here before that fact exists: the message id for text, one id per
 * thinking block, and one id per tool use (handed to `responseFacts` as the call's fact id).
 */
export class ModelPreviews {
  readonly messageId: string;
  /** Provider text block index → the message preview's content index. */
  private readonly textIndexes = new Map<number, number>();
  private readonly thinking = new Map<number, string>();
  private readonly tools = new Map<number, string>();
  private readonly open = new Set<string>();

  constructor(
    private readonly publish: (evidence: LiveEvidence) => void,
    private readonly newFactId: () => string,
  ) {
    this.messageId = newFactId();
  }

  /** Tool use position among the answer's tool uses → the id its fact must get. */
  get toolIds(): ReadonlyMap<number, string> {
    return this.tools;
  }

  add(event: ModelStreamEvent): void {
    switch (event.type) {
      case "text_delta": {
        let index = this.textIndexes.get(event.index);
        if (index === undefined) {
          index = this.textIndexes.size;
          this.textIndexes.set(event.index, index);
          if (index === 0) this.start(this.messageId, "text");
        }
        this.delta(this.messageId, index, event.text);
        return;
      }
      case "thinking_delta": {
        let id = this.thinking.get(event.index);
        if (id === undefined) {
          id = this.newFactId();
          this.thinking.set(event.index, id);
          this.start(id, "thinking");
        }
        this.delta(id, 0, event.text);
        return;
      }
      case "tool_input_start": {
        if (this.tools.has(event.index)) return;
        const id = this.newFactId();
        this.tools.set(event.index, id);
        this.start(id, "tool_input", event.name);
        return;
      }
      case "tool_input_delta": {
        const id = this.tools.get(event.index);
        if (id !== undefined) this.delta(id, 0, event.partialJson);
        return;
      }
    }
  }

  /**
   * The facts the answer's thinking becomes (a progress signal without content), in block order;
   * they carry the ids their previews announced.
   */
  thinkingFacts(): TypedFact[] {
    return [...this.thinking.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, id]) => ({ id, kind: "agent_thinking" }));
  }

  /** Previews whose fact is not among `facts` will never be ended by one: end them now. */
  settle(facts: readonly TypedFact[]): void {
    const ids = new Set(facts.map((fact) => fact.id));
    for (const id of this.open) if (!ids.has(id)) this.abandon(id);
  }

  /** The request failed or its answer will not be committed: no preview becomes a fact. */
  abandonAll(): void {
    for (const id of this.open) this.abandon(id);
  }

  private start(eventId: string, preview: "text" | "thinking" | "tool_input", toolName?: string): void {
    this.open.add(eventId);
    this.publish(
      toolName === undefined
        ? { kind: "preview_start", eventId, preview }
        : { kind: "preview_start", eventId, preview, toolName },
    );
  }

  private delta(eventId: string, index: number, text: string): void {
    this.publish({ kind: "preview_delta", eventId, index, text });
  }

  private abandon(eventId: string): void {
    this.open.delete(eventId);
    this.publish({ kind: "preview_abandoned", eventId });
  }
}
