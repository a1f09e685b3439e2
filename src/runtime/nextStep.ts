import { readToolAwaits, readToolExecution, type ToolAwaits } from "../coordinator/factCodec.js";
import type { AfterAllow } from "../coordinator/facts.js";
import type { CommittedTypedFact } from "../coordinator/factVocabulary.js";
import { activeOutcome, foldOutcomes, type OutcomeState } from "../coordinator/outcomes.js";
import { workflowCallIdOf } from "../coordinator/workflowIds.js";
import type { JsonObject } from "../kernel/json.js";
import { MODEL_ERROR_TYPES } from "./modelFacts.js";
import { childThreadIdOf, spawnCallIdOf } from "./threadSpawning.js";

export type Step =
  /** A model request was started and never ended (the worker died): close its span, then go on. */
  | { kind: "close_dangling_request"; startId: string }
  /**
   * A Hand tool use has no result yet: run it (attempt `attempts + 1`). `attempts > 0` means an
   * earlier owner started it and died before committing the result.
   */
  | {
      kind: "run_tool";
      toolUseId: string;
      name: string;
      input: JsonObject;
      attempts: number;
      /** Set for an MCP call: the server it goes to. */
      mcpServerName?: string;
    }
  /**
   * Tool uses wait for client answers (results or confirmations) or for child threads: park the
   * run. `eventIds` are the calls a client owes; empty when only child threads are waited for.
   */
  | { kind: "await"; eventIds: string[] }
  /**
   * There is input the model has not answered yet. `failedAttempts` counts the model errors since
   * the last answer in this turn (an idle ends a turn; queued input does not reset the count).
   */
  | { kind: "call_model"; failedAttempts: number }
  /**
   * The agent's attempt at the outcome in progress is done (or a dead owner left its evaluation
   * open): grade it. `outcome.openStart` set: resume that evaluation, no second start.
   */
  | { kind: "evaluate_outcome"; outcome: OutcomeState }
  /**
   * An ACP harness's own tool calls were left open by a harness that is gone (its worker died
   * mid-call): they are closed with a result that says so, never run again by the server.
   */
  | { kind: "close_harness_calls"; callIds: string[] }
  /** Nothing left to do in this turn. */
  | { kind: "finish" };

interface HandCall {
  name: string;
  mcpServerName: string | null;
  input: JsonObject;
  attempts: number;
  /** `thread`: a spawn whose child thread has not answered yet (its answer is the call's result). */
  waiting: ToolAwaits["answer"] | "thread" | null;
  afterAllow: AfterAllow;
}

/**
 * Where a run stands, decided from committed facts only. This is what makes a run resumable by
 * any worker: no decision depends on memory that a crash would lose.
 */
export function nextStep(facts: readonly CommittedTypedFact[]): Step {
  const startedAt = new Map<string, number>();
  let danglingStart: string | null = null;
  let lastAnsweredAt = -1;
  let lastInputAt = -1;
  let errorsSinceAnswer = 0;
  /** The version of the last model answer (an outcome's attempt is graded once one follows it). */
  let lastAnswerSeq = -1;
  const pending: string[] = [];
  /**
   * Built-in tool uses without a result, in call order: the attempts their intents recorded, and
   * the client answer each still waits for (null: nothing, the server may run it).
   */
  const handCalls = new Map<string, HandCall>();
  /** Every tool use in call order, so a parked run lists what it waits for in that order. */
  const callOrder: string[] = [];
  /** Threads this history spawned: their messages back are the spawning calls' results, not input. */
  const spawned = new Set<string>();
  /** Workflow runs not ended: the threads of each one's open phase that have not answered yet. */
  const phaseThreads = new Map<string, Set<string>>();
  /**
   * An ACP harness's calls without a result: running in the harness, waiting for a confirmation,
   * or decided (the harness that asked is told the decision when the run goes on).
   */
  const harnessCalls = new Map<string, "running" | "confirmation" | "decided">();

  for (const fact of facts) {
    switch (fact.kind) {
      case "model_request_start":
        danglingStart = fact.id;
        // What the request saw: the version it was built from when recorded (a start committed
        // with its answer, after input that overtook it), else everything before the span.
        startedAt.set(fact.id, fact.contextSeq ?? fact.seq);
        break;
      case "model_request_end": {
        if (danglingStart === fact.startId) danglingStart = null;
        if (!fact.isError) {
          // An answer covers the input committed before its request started; input that arrived
          // while the model was answering (committed before the end) still waits for a reply.
          lastAnsweredAt = Math.max(lastAnsweredAt, startedAt.get(fact.startId) ?? fact.seq);
          lastAnswerSeq = fact.seq;
          errorsSinceAnswer = 0;
        }
        break;
      }
      case "error":
        if (MODEL_ERROR_TYPES.has(fact.errorType)) errorsSinceAnswer += 1;
        break;
      case "status_idle":
        // The turn ended (answered, parked, exhausted or interrupted): the next one starts fresh.
        errorsSinceAnswer = 0;
        break;
      case "tool_call": {
        const { call } = fact;
        callOrder.push(fact.id);
        if (call.executor === "harness") {
          harnessCalls.set(fact.id, "running");
          break;
        }
        if (call.executor === "client") {
          pending.push(fact.id);
          break;
        }
        handCalls.set(fact.id, {
          name: call.name,
          mcpServerName: call.executor === "mcp" ? (call.mcpServer ?? "") : null,
          input: call.input,
          attempts: 0,
          waiting: null,
          afterAllow: "server",
        });
        break;
      }
      case "internal": {
        const awaits = readToolAwaits(fact);
        const awaitsCall = awaits && handCalls.get(awaits.callId);
        if (awaits && awaitsCall) {
          awaitsCall.waiting = awaits.answer;
          awaitsCall.afterAllow = awaits.afterAllow;
        }
        if (awaits && harnessCalls.has(awaits.callId)) harnessCalls.set(awaits.callId, "confirmation");
        const execution = readToolExecution(fact);
        const executed = execution && handCalls.get(execution.callId);
        if (execution && executed) executed.attempts = Math.max(executed.attempts, execution.attempt);
        break;
      }
      case "thread_created": {
        spawned.add(fact.thread);
        if (fact.workflowRun !== null) phaseThreads.get(fact.workflowRun)?.add(fact.thread);
        const spawning = handCalls.get(spawnCallIdOf(fact.thread));
        if (spawning && childThreadIdOf(spawnCallIdOf(fact.thread)) === fact.thread)
          spawning.waiting = "thread";
        break;
      }
      case "thread_message_received":
        // A child's answer arrives with its spawning call's result; another thread's message is input.
        if (!spawned.has(fact.fromThread)) lastInputAt = fact.seq;
        for (const threads of phaseThreads.values()) threads.delete(fact.fromThread);
        break;
      case "workflow_run": {
        // A run's call waits while a step of its open phase has not answered; then it runs again
        // (the next phase, or the run's end). Its ending carries the call's result.
        if (fact.run === null) break;
        if (fact.change.type === "created" || fact.change.type === "phase_started")
          phaseThreads.set(fact.run, new Set());
        if (fact.change.type === "status_ended") phaseThreads.delete(fact.run);
        break;
      }
      case "tool_confirmation": {
        if (harnessCalls.get(fact.callId) === "confirmation") {
          // The harness that asked waits for the decision: telling it is the Brain's next step.
          harnessCalls.set(fact.callId, "decided");
          lastInputAt = fact.seq;
          break;
        }
        const call = handCalls.get(fact.callId);
        if (call?.waiting !== "confirmation") break;
        // Allowed: the server runs it, or the self-hosted client now owes its result. Denied: the
        // denial result committed with the confirmation closes the call.
        call.waiting = fact.allowed && call.afterAllow === "client" ? "server_tool_result" : null;
        break;
      }
      case "tool_result": {
        if (harnessCalls.has(fact.callId)) {
          // The harness ran (or was refused) its own call: its result is the harness's to read, not
          // new input for the Brain (a decision reached it as input with its confirmation).
          harnessCalls.delete(fact.callId);
          break;
        }
        if (fact.executor === "client") {
          const index = pending.indexOf(fact.callId);
          if (index >= 0) pending.splice(index, 1);
        } else {
          handCalls.delete(fact.callId);
        }
        lastInputAt = fact.seq;
        break;
      }
      case "interrupt":
        pending.length = 0;
        handCalls.clear();
        harnessCalls.clear();
        // An interrupt ends the turn: older input counts as handled.
        lastAnsweredAt = fact.seq;
        errorsSinceAnswer = 0;
        break;
      case "user_message":
      case "system_message":
      // The outcome's description is the agent's task.
      case "outcome_defined":
        lastInputAt = fact.seq;
        break;
      case "outcome_evaluation_end":
        // The grader's feedback is the next attempt's input; an exhausted budget gets one last
        // acknowledgment turn.
        if (fact.result === "needs_revision" || fact.result === "max_iterations_reached")
          lastInputAt = fact.seq;
        break;
    }
  }
  for (const [run, threads] of phaseThreads) {
    const call = handCalls.get(workflowCallIdOf(run));
    if (call) call.waiting = threads.size > 0 ? "thread" : null;
  }
  if (danglingStart !== null) return { kind: "close_dangling_request", startId: danglingStart };
  const orphaned = [...harnessCalls].filter(([, state]) => state === "running").map(([id]) => id);
  if (orphaned.length > 0) return { kind: "close_harness_calls", callIds: orphaned };
  for (const [toolUseId, call] of handCalls) {
    if (call.waiting === null) {
      return {
        kind: "run_tool",
        toolUseId,
        name: call.name,
        input: call.input,
        attempts: call.attempts,
        ...(call.mcpServerName === null ? {} : { mcpServerName: call.mcpServerName }),
      };
    }
  }
  const awaiting = callOrder.filter(
    (id) => pending.includes(id) || handCalls.has(id) || harnessCalls.get(id) === "confirmation",
  );
  if (awaiting.length > 0) {
    return { kind: "await", eventIds: awaiting.filter((id) => handCalls.get(id)?.waiting !== "thread") };
  }
  const outcome = activeOutcome(foldOutcomes(facts));
  // A verdict first: input that arrived while the grader worked waits for it.
  if (outcome?.openStart) return { kind: "evaluate_outcome", outcome };
  if (lastInputAt > lastAnsweredAt) return { kind: "call_model", failedAttempts: errorsSinceAnswer };
  if (outcome && lastAnswerSeq > outcome.attemptSince) return { kind: "evaluate_outcome", outcome };
  return { kind: "finish" };
}
