import type { Message, StreamResponse } from "@a2a-js/sdk";
import type { CommittedTypedFact } from "../../coordinator/factVocabulary.js";
import type { LiveEvidence } from "../../coordinator/ports.js";
import { isoTime, STATE, textArtifact } from "./a2aWire.js";
import { contentText } from "./contentText.js";
import { historyMessage, statusMessage } from "./taskMessages.js";
import type { TurnTask } from "./taskProjection.js";
import { isResting } from "./taskTracker.js";

/**
 * Turns one task's live tail into the protocol's stream events: a status update whenever the
 * state changes (the last one at rest), a working status carrying each tool step, and each agent
 * text as an artifact: streamed in chunks from its preview, then replaced whole by the committed
 * fact under the same id, the id the stored task's artifact has.
 */
export class TaskStreamFormatter {
  /** Text previews seen from their start: whether a chunk of each went out. */
  private readonly previews = new Map<string, boolean>();

  constructor(private readonly task: TurnTask) {}

  preview(evidence: LiveEvidence): StreamResponse[] {
    const id = evidence.eventId;
    if (evidence.kind === "preview_start") {
      if (evidence.preview === "text") this.previews.set(id, false);
      return [];
    }
    if (evidence.kind === "preview_abandoned") {
      this.previews.delete(id);
      return [];
    }
    const sent = this.previews.get(id);
    if (sent === undefined || evidence.text === "") return [];
    this.previews.set(id, true);
    return [this.artifactUpdate(id, evidence.text, sent, false)];
  }

  /** The events a committed fact shows, and whether the task came to rest with it. */
  fact(fact: CommittedTypedFact): { events: StreamResponse[]; rested: boolean } {
    const { task } = this;
    const events: StreamResponse[] = [];
    if (fact.kind === "user_message") {
      // Another turn began: this task's range is over.
      task.tracker.close();
      events.push(this.statusUpdate());
      return { events, rested: true };
    }
    task.facts.push(fact);
    const changed = task.tracker.observe(fact);
    if (fact.kind === "agent_message") {
      this.previews.delete(fact.id);
      const text = contentText(fact.content);
      if (text !== "") events.push(this.artifactUpdate(fact.id, text, false, true));
    } else if (
      fact.kind === "tool_call" ||
      fact.kind === "tool_result" ||
      fact.kind === "tool_confirmation"
    ) {
      const step = historyMessage(fact, task.id, task.contextId);
      if (step && !changed) events.push(this.statusUpdate(step));
    }
    if (changed) events.push(this.statusUpdate());
    return { events, rested: isResting(task.tracker.state) };
  }

  private statusUpdate(stepMessage?: Message): StreamResponse {
    const { task } = this;
    return {
      payload: {
        $case: "statusUpdate",
        value: {
          taskId: task.id,
          contextId: task.contextId,
          status: {
            state: STATE[task.tracker.state],
            message: stepMessage ?? statusMessage(task.tracker, task.id, task.contextId),
            timestamp: isoTime(task.tracker.updatedAt),
          },
          metadata: undefined,
        },
      },
    };
  }

  private artifactUpdate(
    artifactId: string,
    text: string,
    append: boolean,
    lastChunk: boolean,
  ): StreamResponse {
    return {
      payload: {
        $case: "artifactUpdate",
        value: {
          taskId: this.task.id,
          contextId: this.task.contextId,
          artifact: textArtifact(artifactId, text),
          append,
          lastChunk,
          metadata: undefined,
        },
      },
    };
  }
}
