/**
 * Subagents: the tool a run with a `multiagent` roster offers its model to spawn child threads,
 * the spawn itself (committed in the parent's fenced commit, with the child's row, first input and
 * run), and the child's answer at the end of its turn (committed in the child's fenced commit on
 * the parent's history). Every id is derived from the spawning tool call, so a re-run after a crash
 * finds the child it already made instead of making another.
 */

import {
  childRunIdOf,
  childThreadIdOf,
  spawnCallIdOf,
  type ThreadAnswer,
  type ThreadSpawn,
} from "../coordinator/commitOperation.js";
import { encodeFact } from "../coordinator/factCodec.js";
import type {
  CommittedTypedFact,
  ContentBlock,
  IdleReason,
  TypedFact,
} from "../coordinator/factVocabulary.js";
import type { ExecutableAgentSnapshot } from "../coordinator/ports.js";
import { workflowRunOfThread } from "../coordinator/workflowIds.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import type { ModelToolSpec } from "../providers/ports.js";
import { type AgentChoice, agentChoiceSchema, chooseAgent } from "./agentChoice.js";
import type { Step } from "./nextStep.js";
import type { CommitStatus, RunContext } from "./runContext.js";
import { addRuntimeTools, type CatalogEntry } from "./toolCatalog.js";
import { toolResult } from "./toolFacts.js";

/** The tool's name (the SDK names no tool for this; the input is the roster name and the task). */
export const SPAWN_TOOL = "spawn_agent";
const MAX_MESSAGE_CHARS = 100_000;

// The child thread a spawning call makes, and its run: the call's id in another namespace (the
// coordinator routes a client's interrupt of a child to its spawning call by the same rule).
export { childRunIdOf, childThreadIdOf, spawnCallIdOf } from "../coordinator/commitOperation.js";

/** Offers the spawn tool when the run's agent may spawn subagents (gated like any server tool: always allowed). */
export function addSpawnTool(catalog: Map<string, CatalogEntry>, agent: ExecutableAgentSnapshot): void {
  const choice = agentChoiceSchema(agent, "subagents");
  if (choice === null) return;
  const spec: ModelToolSpec = {
    name: SPAWN_TOOL,
    description:
      "Start a subagent on a task in a thread of its own. Its final answer comes back as this call's result. " +
      "Call it several times in one answer to run several subagents in parallel.",
    input_schema: {
      type: "object",
      properties: {
        ...choice.properties,
        message: { type: "string", description: "The task, as the subagent's first message." },
      },
      required: [...choice.required, "message"],
    },
  };
  addRuntimeTools(catalog, [
    {
      spec,
      repeatable: true,
      // Never run in process: the run loop commits the spawn (`SpawnStep`) instead.
      run: async () => ({ text: "spawn_agent runs as a thread", isError: true }),
    },
  ]);
}

/** The threads this history spawned (their `thread_created`), so their answers read as tool results. */
export function spawnedThreads(facts: readonly CommittedTypedFact[]): Set<string> {
  return new Set(facts.flatMap((f) => (f.kind === "thread_created" ? [f.thread] : [])));
}

/**
 * The parent of a child thread: the sender of its history's first fact (the task it was spawned
 * with); null on a primary thread.
 */
export function parentOf(facts: readonly CommittedTypedFact[]): string | null {
  const first = facts[0];
  return first?.kind === "thread_message_received" ? first.fromThread : null;
}

export class SpawnStep {
  constructor(private readonly run: RunContext) {}

  /** Spawns the call's child thread; a call the roster cannot answer gets an error result instead. */
  async spawn(step: Extract<Step, { kind: "run_tool" }>): Promise<CommitStatus> {
    const now = this.run.ports.clock.now();
    const input = step.input as JsonObject;
    const message = typeof input.message === "string" ? input.message : "";
    const choice = chooseAgent(this.run.activation.agent, "subagents", input);
    if ("error" in choice || message.trim() === "" || message.length > MAX_MESSAGE_CHARS) {
      const why =
        "error" in choice
          ? choice.error
          : `message must be a non-empty string of at most ${MAX_MESSAGE_CHARS} characters`;
      return this.run.commitLanding([toolResult(now, step.toolUseId, `spawn_agent: ${why}`, true)]);
    }
    const thread = childThreadIdOf(step.toolUseId);
    const content: ContentBlock[] = [{ type: "text", text: message }];
    const { facts, spawn } = spawnFacts(this.run, now, {
      threadId: thread,
      runId: childRunIdOf(step.toolUseId),
      choice,
      content,
      workflowRun: null,
    });
    return this.run.commit(facts, undefined, { spawns: [spawn] });
  }
}

/**
 * One child thread's start: on the parent's history its creation, its task sent and its running
 * status; the spawn carries the child's row, first input and run, written in the same commit.
 */
export function spawnFacts(
  run: RunContext,
  now: number,
  child: {
    threadId: string;
    runId: string;
    choice: AgentChoice;
    content: ContentBlock[];
    workflowRun: string | null;
  },
): { facts: TypedFact[]; spawn: ThreadSpawn } {
  const { threadId: thread, choice, content } = child;
  const spawn: ThreadSpawn = {
    threadId: thread,
    runId: child.runId,
    agentName: choice.agentName,
    agent: choice.agent,
    ...(choice.inline ? { inline: choice.inline } : {}),
    facts: [
      encodeFact({
        id: newId("sevt", now),
        kind: "thread_message_received",
        fromThread: run.activation.threadId,
        fromAgentName: run.activation.agent.definition.name,
        content,
      }),
      // As an input that starts a run says it (inputRules): the child's own history is ordinary.
      encodeFact({ id: newId("sevt", now), kind: "status_running" }),
    ],
  };
  const name = choice.agentName;
  return {
    facts: [
      {
        id: newId("sevt", now),
        kind: "thread_created",
        thread,
        agentName: name,
        workflowRun: child.workflowRun,
      },
      { id: newId("sevt", now), kind: "thread_message_sent", toThread: thread, toAgentName: name, content },
      {
        id: newId("sevt", now),
        kind: "thread_status",
        thread,
        agentName: name,
        transition: { to: "running" },
      },
    ],
    spawn,
  };
}

/** Why a child's turn ended without its model's last answer, as the parent's model reads it. */
const STOP_WORDS: Partial<Record<IdleReason["kind"], string>> = {
  budget_reached: "the session's budget is reached",
  retries_exhausted: "its requests kept failing",
  refusal: "its model refused",
};

/**
 * A child's answer to its parent at the end of a turn: its status, its last message (sent to the
 * parent, received there) and the spawning call's result, which the parent's model reads. A turn
 * that ended otherwise than by the model's last answer (`reason`: the budget, exhausted retries, a
 * refusal) still answers, as an error result naming why, so the parent never waits on it.
 */
export function threadAnswer(
  facts: readonly CommittedTypedFact[],
  threadId: string,
  agentName: string,
  now: number,
  /** Facts of the turn-ending commit itself (the model's last answer), not yet in `facts`. */
  ending: readonly TypedFact[] = [],
  reason: IdleReason = { kind: "turn_ended" },
): { sent: TypedFact; answer: ThreadAnswer } | null {
  const parent = parentOf(facts);
  if (parent === null) return null;
  const last = [...facts, ...ending].findLast((f) => f.kind === "agent_message");
  const content: ContentBlock[] = last?.kind === "agent_message" ? last.content : [];
  const text = content
    .flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []))
    .join("\n");
  const stopped = reason.kind !== "turn_ended";
  const result = stopped
    ? `(the subagent stopped: ${STOP_WORDS[reason.kind] ?? "its turn ended"})${text === "" ? "" : `\n${text}`}`
    : text === ""
      ? "(the subagent answered with no text)"
      : text;
  const answer: TypedFact[] = [
    {
      id: newId("sevt", now),
      kind: "thread_status",
      thread: threadId,
      agentName,
      transition: { to: "idle", reason },
    },
    {
      id: newId("sevt", now),
      kind: "thread_message_received",
      fromThread: threadId,
      fromAgentName: agentName,
      content,
    },
    // A workflow step's answer is its run's to collect; a spawned child's is its call's result.
    ...(workflowRunOfThread(threadId) === null
      ? [toolResult(now, spawnCallIdOf(threadId), result, stopped)]
      : []),
  ];
  return {
    sent: {
      id: newId("sevt", now),
      kind: "thread_message_sent",
      toThread: parent,
      toAgentName: null,
      content,
    },
    answer: { parentThreadId: parent, facts: answer.map(encodeFact) },
  };
}

/** Runtime bookkeeping no protocol shows: a run parked until its child threads answer. */
export const PARKED_ON_THREADS = "awaken.parked_on_threads";

export function parkedOnThreads(now: number): TypedFact {
  return { id: newId("sevt", now), kind: "internal", type: PARKED_ON_THREADS, body: {} };
}
