/**
 * The delegate step: a turn of an agent whose model is `a2a:<agent card URL>`, run as a task on
 * that remote agent. Kept apart from the model step because a remote task outlives the request
 * that started it: its id is committed the moment the remote names it, so a worker that dies
 * mid-call resumes it (GetTask, then SubscribeToTask) instead of sending the message again; the
 * message id is derived from our session and the input it carries, so even a send retried before
 * the id was committed is recognised by the remote as the same message.
 */

import { type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { A2AError } from "@a2a-js/sdk/errors";
import { decodeCommitted } from "../coordinator/factCodec.js";
import type { TypedFact } from "../coordinator/factVocabulary.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";
import { secondsSince } from "../kernel/metrics.js";
import { defaultOutbound, outboundRefusalOf } from "../kernel/outboundConnector.js";
import { ProviderError } from "../providers/ports.js";
import {
  A2aHttpRefusal,
  A2aRemote,
  isResting,
  isRestingState,
  isTerminal,
  partsText,
  stateName,
} from "./a2a/a2aRemote.js";
import {
  A2A_INPUT_TOOL,
  type DelegateTurn,
  delegateTurn,
  type RemoteTask,
  remoteTaskFact,
} from "./a2a/delegateFacts.js";
import { idle, type ModelSpan, sessionError, spanEnd, spanStart } from "./modelFacts.js";
import { ModelPreviews } from "./modelPreviews.js";
import type { TurnOutcome } from "./ports.js";
import { commitRequestFailure } from "./requestFailure.js";
import type { RunContext } from "./runContext.js";

export const A2A_PROVIDER = "a2a";
/** A remote task that ended failed, canceled or rejected. */
export const A2A_TASK_FAILED = "a2a_task_failed_error";
/** The remote agent cannot be used (address policy, credential, a protocol refusal). */
const A2A_UNAVAILABLE = "a2a_agent_unavailable_error";
/** How often a dropped stream is picked up again (SubscribeToTask) before the call counts as failed. */
const MAX_RECONNECTS = 5;
const CANCEL_TIMEOUT_MS = 5_000;
/** The remote's own words in our error fact are bounded: they are another system's text. */
const MAX_REASON_CHARS = 2_000;

/** The run's claim was lost while committing: nothing more may be written. */
class ClaimLost extends Error {}

/** A failure retrying cannot fix: the turn ends with `a2a_agent_unavailable_error`. */
class Unavailable extends Error {}

export class A2aDelegateStep {
  /** Whether this run's last connection carried a pinned credential (for the refusal's wording). */
  private openedCredential = false;

  constructor(
    private readonly run: RunContext,
    private readonly cardUrl: string,
  ) {}

  async callRemote(failedAttempts: number): Promise<TurnOutcome | "continue"> {
    const sessionId = this.run.activation.sessionId;
    const turn = delegateTurn(this.run.facts, sessionId);
    const now = this.run.ports.clock.now();
    if (!turn) {
      const done = await this.run.commit([idle(now, { kind: "turn_ended" })], "done");
      return done === "ok" ? "settled" : done === "lost" ? "lost_claim" : "continue";
    }
    const span: ModelSpan = { startId: newId("sevt", now), provider: A2A_PROVIDER, model: this.run.model() };
    const started = await this.run.commit([spanStart(span)]);
    if (started === "lost") return "lost_claim";
    if (started === "conflict") return "continue";

    const previews = new ModelPreviews(
      (evidence) => this.run.ports.publish(sessionId, evidence),
      () => newId("sevt", this.run.ports.clock.now()),
    );
    const requestedAt = performance.now();
    let remote: A2aRemote | null = null;
    let record = turn.recorded;
    let task: Task;
    try {
      remote = await this.connect();
      task = await this.follow(remote, turn, previews, (committed) => {
        record = committed;
      });
    } catch (error) {
      previews.abandonAll();
      this.run.metrics.modelRequest(
        A2A_PROVIDER,
        "a2a",
        this.run.signal.aborted ? "aborted" : "error",
        secondsSince(requestedAt),
      );
      if (error instanceof ClaimLost) return "lost_claim";
      if (this.run.signal.aborted) {
        if (remote && record) await this.cancelIfInterrupted(remote, record);
        return "lost_claim";
      }
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof A2aHttpRefusal) {
        return commitRequestFailure(
          this.run,
          span,
          failedAttempts,
          new Error(this.refusalText(error)),
          A2A_UNAVAILABLE,
        );
      }
      if (error instanceof Unavailable || error instanceof A2AError || outboundRefusalOf(error)) {
        const reason =
          error instanceof A2AError ? `the remote A2A agent refused the request: ${message}` : message;
        return commitRequestFailure(this.run, span, failedAttempts, new Error(reason), A2A_UNAVAILABLE);
      }
      // Connection trouble: retried with backoff; the same message id makes a resend harmless.
      return commitRequestFailure(
        this.run,
        span,
        failedAttempts,
        new ProviderError("request_failed", `the remote A2A agent could not be reached: ${message}`, {
          transient: true,
          cause: error,
        }),
      );
    }
    this.run.metrics.modelRequest(A2A_PROVIDER, "a2a", "ok", secondsSince(requestedAt));
    return this.land(span, task, previews);
  }

  private refusalText(refusal: A2aHttpRefusal): string {
    if (refusal.status === 404) return `there is no agent card at ${this.cardUrl} (HTTP 404)`;
    return this.openedCredential
      ? `the remote A2A agent rejected the pinned credential (HTTP ${refusal.status})`
      : `the remote A2A agent requires authentication (HTTP ${refusal.status}) and the session pinned no credential for ${this.cardUrl}; attach a vault with a bearer credential whose URL is the agent card URL`;
  }

  /**
   * Connects for this call only: the address policy first, then the pinned credential (opened
   * through admission now, turned into the header, the Buffer zeroed), then the card.
   */
  private async connect(): Promise<A2aRemote> {
    const outbound = this.run.ports.outbound ?? defaultOutbound();
    this.admitEgress();
    const refused = await outbound.admit(this.cardUrl);
    if (refused)
      throw new Unavailable(`the remote A2A agent at ${this.cardUrl} is not allowed: ${refused.message}`);
    let authorization: string | null = null;
    this.openedCredential = false;
    const custody = this.run.ports.credentials;
    if (custody) {
      const a = this.run.activation;
      const opening = await custody.open({
        workspaceId: a.workspaceId,
        sessionId: a.sessionId,
        runId: a.runId,
        owner: a.owner,
        epoch: a.epoch,
        holder: "a2a_delegate",
        agentCardUrl: this.cardUrl,
      });
      if (opening.kind === "refused") {
        throw new Unavailable(
          `the credential pinned for the remote A2A agent (${opening.credentialId}, revision ${opening.revision}) was refused: ${opening.reason}`,
        );
      }
      if (opening.kind === "bearer") {
        this.openedCredential = true;
        try {
          if (this.run.signal.aborted) throw new ClaimLost();
          authorization = `Bearer ${opening.token.toString("utf8")}`;
        } finally {
          opening.token.fill(0);
        }
      }
    }
    return A2aRemote.connect(this.cardUrl, authorization, outbound.fetch);
  }

  /** A `limited` environment reaches only the hosts it lists, the remote agent's included. */
  private admitEgress(): void {
    const config = this.run.environment();
    if (config.type !== "cloud" || config.networking.type !== "limited") return;
    const url = new URL(this.cardUrl);
    const allowed = config.networking.allowed_hosts;
    if (allowed.includes(url.hostname) || allowed.includes(url.host)) return;
    throw new Unavailable(
      `the environment's networking is limited and does not list the remote A2A agent's host (${url.host}) in allowed_hosts`,
    );
  }

  /**
   * Sends the turn's message (or, when the remote already took it, resumes that task) and follows
   * the task until it rests; answers the task as the remote has it then (GetTask).
   */
  private async follow(
    remote: A2aRemote,
    turn: DelegateTurn,
    previews: ModelPreviews,
    onRecorded: (task: RemoteTask) => void,
  ): Promise<Task> {
    const signal = this.run.signal;
    let record = turn.recorded;
    let stream: AsyncGenerator<StreamResponse, void, undefined>;
    if (record) {
      const current = await remote.getTask(record.taskId, signal);
      if (isResting(current)) return current;
      stream = remote.resubscribe(record.taskId, signal);
    } else {
      if (turn.previous && turn.taskId === "") await this.closeLeftOpen(remote, turn.previous);
      stream = remote.send(turn, signal);
    }
    const artifacts = new Map<string, string>();
    let progressCount = 0;
    for (let reconnects = 0; ; reconnects++) {
      try {
        for await (const event of stream) {
          const payload = event.payload;
          if (!payload) continue;
          if (payload.$case === "message") {
            // A plain answer without a task: nothing to resume, the message is the result.
            return messageTask(payload.value.parts, turn);
          }
          if (payload.$case === "task") {
            if (!record) {
              record = {
                taskId: payload.value.id,
                contextId: payload.value.contextId,
                messageId: turn.messageId,
              };
              await this.record(record);
              onRecorded(record);
            }
            if (isResting(payload.value)) break;
          } else if (payload.$case === "statusUpdate") {
            const status = payload.value.status;
            if (status && isRestingState(status.state)) break;
            // Progress the remote reports while it works: a thinking preview, committed as a signal.
            const progress = partsText(status?.message?.parts);
            if (progress !== "")
              previews.add({ type: "thinking_delta", index: progressCount++, text: progress });
          } else if (payload.$case === "artifactUpdate") {
            const { artifact, append } = payload.value;
            if (!artifact) continue;
            const sent = artifacts.get(artifact.artifactId) ?? "";
            const text = partsText(artifact.parts);
            // Chunks are appended; a whole artifact repeats what was streamed and adds the rest.
            const delta = append ? text : text.startsWith(sent) ? text.slice(sent.length) : "";
            artifacts.set(artifact.artifactId, append ? sent + text : text);
            if (delta !== "") previews.add({ type: "text_delta", index: 0, text: delta });
          }
        }
      } catch (error) {
        // A task that came to rest between our read and the subscription refuses the subscription;
        // the read below tells. Anything before the remote named a task is the send's own failure.
        if (!(error instanceof A2AError) || !record) throw error;
      }
      if (!record) throw new Error("the remote A2A agent's stream ended before it named a task");
      const current = await remote.getTask(record.taskId, signal);
      if (isResting(current)) return current;
      if (reconnects >= MAX_RECONNECTS)
        throw new Error(`the stream of remote task ${record.taskId} kept dropping`);
      stream = remote.resubscribe(record.taskId, signal);
    }
  }

  /** Commits the remote task's id before anything else happens: from here on a crash resumes it. */
  private async record(task: RemoteTask): Promise<void> {
    const status = await this.run.commitLanding([
      remoteTaskFact(newId("sevt", this.run.ports.clock.now()), task),
    ]);
    if (status === "lost") throw new ClaimLost();
  }

  /** The context's previous task, left waiting by an interrupted turn, is canceled before a new one. */
  private async closeLeftOpen(remote: A2aRemote, previous: RemoteTask): Promise<void> {
    try {
      const task = await remote.getTask(previous.taskId, this.run.signal);
      if (!isTerminal(task)) await remote.cancel(previous.taskId, this.run.signal);
    } catch (error) {
      if (this.run.signal.aborted) throw error;
      this.run.ports.log.warn(
        { runId: this.run.activation.runId, taskId: previous.taskId, error: String(error) },
        "the previous remote A2A task could not be closed",
      );
    }
  }

  /**
   * Our run was stopped. When an interrupt did it (committed after the call began), the remote task
   * is canceled too, with the connection already open; a lost lease or a shutdown leaves the task
   * running for the next owner to resume.
   */
  private async cancelIfInterrupted(remote: A2aRemote, record: RemoteTask): Promise<void> {
    try {
      const known = this.run.facts.at(-1)?.seq ?? 0;
      const later = (await this.run.ports.readThread(this.run.activation.threadId, known)).map(
        decodeCommitted,
      );
      if (!later.some((fact) => fact.kind === "interrupt")) return;
      await remote.cancel(record.taskId, AbortSignal.timeout(CANCEL_TIMEOUT_MS));
      this.run.ports.log.info(
        { runId: this.run.activation.runId, taskId: record.taskId },
        "interrupt: the remote A2A task was canceled",
      );
    } catch (error) {
      this.run.ports.log.warn(
        { runId: this.run.activation.runId, taskId: record.taskId, error: String(error) },
        "interrupt: the remote A2A task could not be canceled",
      );
    }
  }

  /** Commits where the remote task came to rest, through the fence like any model answer. */
  private async land(
    span: ModelSpan,
    task: Task,
    previews: ModelPreviews,
  ): Promise<TurnOutcome | "continue"> {
    const now = this.run.ports.clock.now();
    const state = task.status?.state;
    const statusText = partsText(task.status?.message?.parts);
    if (isTerminal(task) && stateName(task) !== "completed") {
      const facts = [
        spanEnd(span, now, null, true),
        sessionError(
          now,
          A2A_TASK_FAILED,
          `the remote A2A agent's task ${task.id} ended ${stateName(task)}${statusText ? `: ${statusText.slice(0, MAX_REASON_CHARS)}` : ""}`,
          "exhausted",
          { a2a_task_id: task.id },
        ),
        idle(now, { kind: "retries_exhausted" }),
      ];
      previews.abandonAll();
      const status = await this.run.commitLanding(facts, "failed");
      return status === "ok" ? "settled" : "lost_claim";
    }
    const body: TypedFact[] = [...previews.thinkingFacts()];
    const answer = isTerminal(task) ? artifactsText(task) || statusText : "";
    if (answer !== "")
      body.push({ id: previews.messageId, kind: "agent_message", content: [{ type: "text", text: answer }] });
    let terminal: { fact: TypedFact; settle: "awaiting" | "done" };
    if (state !== undefined && !isTerminal(task)) {
      // input-required (or auth-required): our session parks on a client call that names the task.
      const callId = newId("sevt", now);
      const input: JsonObject = {
        task_id: task.id,
        context_id: task.contextId,
        state: stateName(task),
        question: statusText || artifactsText(task),
      };
      body.push({
        id: callId,
        kind: "tool_call",
        call: { id: callId, name: A2A_INPUT_TOOL, input, executor: "client" },
      });
      terminal = { fact: idle(now, { kind: "waiting", callIds: [callId] }), settle: "awaiting" };
    } else {
      terminal = { fact: idle(now, { kind: "turn_ended" }), settle: "done" };
    }
    body.push(spanEnd(span, now, null, false));
    previews.settle(body);
    const committed = await this.run.commit([...body, terminal.fact], terminal.settle);
    if (committed === "ok") return "settled";
    if (committed === "lost") return "lost_claim";
    // New input arrived meanwhile: the answer stays true history; the loop decides what is next.
    const rebased = await this.run.commitLanding(body);
    return rebased === "lost" ? "lost_claim" : "continue";
  }
}

function artifactsText(task: Task): string {
  return task.artifacts
    .map((artifact) => partsText(artifact.parts))
    .filter((t) => t !== "")
    .join("\n");
}

/** A plain message answer, read as a completed task of its own (there is no task to resume). */
function messageTask(parts: Task["artifacts"][number]["parts"], turn: DelegateTurn): Task {
  return {
    id: "",
    contextId: turn.contextId,
    status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
    artifacts: [
      { artifactId: "message", name: "", description: "", parts, metadata: undefined, extensions: [] },
    ],
    history: [],
    metadata: undefined,
  };
}
