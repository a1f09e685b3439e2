import { decodeCommitted } from "../../coordinator/factCodec.js";
import type { ToolCall } from "../../coordinator/factVocabulary.js";
import type { SessionRecord } from "../../coordinator/ports.js";
import { AwakenError } from "../../kernel/errors.js";
import type { EdgeServices } from "../http/edgeServices.js";
import type { AgentCallInput } from "./callInput.js";
import type { CallOutcome } from "./callResults.js";
import { TurnObserver, type TurnRest } from "./turnObserver.js";

/** A user's answer to one approval; null: no answer (dismissed, timed out, unsupported). */
export type ApprovalAnswer = { allowed: boolean; denyMessage: string | null } | null;

/** What one tool call can do besides running the turn: the client's side of the MCP session. */
export interface TurnClient {
  /** Aborts when the client cancels the call (or the MCP session ends). */
  signal: AbortSignal;
  /** Whether an abort of `signal` is the client's cancel (then the run is interrupted). */
  cancelled(): boolean;
  /** Whether the client asked for progress (then text streaming is reported too). */
  wantsProgress: boolean;
  /** Reports progress, when the client asked for it. */
  progress(message: string): void;
  /** Asks the user to decide `call`; absent when the client cannot show a form (no elicitation). */
  decide?: (call: ToolCall) => Promise<ApprovalAnswer>;
}

/**
 * One agent tool call: the turn its message starts, in a new session of the agent or the session
 * `session_id` names (which must run this agent and be free to take a message), followed on the
 * session's tail until it rests. Approvals are decided through `client.decide` and committed as
 * confirmations, and the turn goes on; what nobody here can answer (an approval without a form,
 * a client tool) ends the call naming what the session waits for. Refused input writes nothing.
 */
export async function runAgentTurn(
  services: EdgeServices,
  workspaceId: string,
  agentId: string,
  input: AgentCallInput,
  client: TurnClient,
): Promise<CallOutcome | null> {
  let session: SessionRecord;
  if (input.sessionId !== undefined) {
    const found = await services.entry.findNamed(workspaceId, input.sessionId);
    const refusal = refuseSession(found, input.sessionId, agentId);
    if (refusal) return refusal;
    session = found as SessionRecord;
  } else {
    if (client.signal.aborted) return null;
    session = await services.entry.start({ workspaceId, agent: { id: agentId } });
  }
  if (client.signal.aborted) return null;
  // From the send on, a cancel interrupts the turn the message started.
  try {
    const echo = await services.sessions.send(
      workspaceId,
      session.id,
      [{ kind: "message", content: [{ type: "text", text: input.message }] }],
      {},
    );
    const after = Math.max(0, ...echo.map((f) => f.seq));
    client.progress(`Session ${session.id}: the agent is working.`);
    const outcome = await followTurn(services, workspaceId, session, after, client);
    if (outcome) return outcome;
  } finally {
    if (client.signal.aborted && client.cancelled()) await interrupt(services, workspaceId, session.id);
  }
  if (client.signal.aborted) return null;
  return {
    kind: "refused",
    sessionId: session.id,
    message: `Session ${session.id} ended before the turn did.`,
  };
}

async function followTurn(
  services: EdgeServices,
  workspaceId: string,
  session: SessionRecord,
  afterSeq: number,
  client: TurnClient,
): Promise<CallOutcome | null> {
  const observer = new TurnObserver();
  // Previews only tell a progress reader that text streams: one notice per streamed message.
  const previews = client.wantsProgress;
  const texts = new Set<string>();
  const reported = new Set<string>();
  for await (const item of services.tail.open(session, { afterSeq, previews, signal: client.signal })) {
    if (item.kind === "preview") {
      const { evidence } = item;
      if (evidence.kind === "preview_start" && evidence.preview === "text") texts.add(evidence.eventId);
      if (
        evidence.kind === "preview_delta" &&
        texts.has(evidence.eventId) &&
        !reported.has(evidence.eventId)
      ) {
        reported.add(evidence.eventId);
        client.progress("The agent is writing.");
      }
      continue;
    }
    const fact = decodeCommitted(item.fact);
    const rest = observer.observe(fact);
    if (fact.kind === "tool_call") client.progress(`Calling ${fact.call.name}.`);
    else if (fact.kind === "tool_result") {
      client.progress(`${observer.call(fact.callId)?.name ?? "A tool"} returned.`);
    }
    if (!rest) continue;
    const outcome = await settle(services, workspaceId, session.id, rest, client);
    if (outcome !== "continue") return outcome;
  }
  return null;
}

/** The call's answer for a rest of the turn, or "continue" when approvals were answered here. */
async function settle(
  services: EdgeServices,
  workspaceId: string,
  sessionId: string,
  rest: TurnRest,
  client: TurnClient,
): Promise<CallOutcome | "continue" | null> {
  if (rest.kind === "closed") return null;
  if (rest.kind === "ended") return { ...rest, kind: "ended", sessionId };
  const { decide } = client;
  if (rest.approvals.length === 0 || !decide) {
    return { kind: "pending", sessionId, ...pick(rest) };
  }
  const unanswered: ToolCall[] = [];
  const answers = [];
  for (const call of rest.approvals) {
    client.progress(`Waiting for approval of ${call.name}.`);
    const answer = await decide(call);
    if (client.signal.aborted) return null;
    if (answer) answers.push({ kind: "tool_confirmation" as const, callId: call.id, ...answer });
    else unanswered.push(call);
  }
  if (answers.length > 0) {
    try {
      await services.sessions.send(workspaceId, sessionId, answers, {});
    } catch (error) {
      // Answered meanwhile over another edge: that committed answer stands, the tail shows it.
      if (!(error instanceof AwakenError) || error.category === "internal") throw error;
    }
  }
  if (unanswered.length > 0 || rest.clientCalls.length > 0) {
    const answered = new Set(answers.map((a) => a.callId));
    return {
      kind: "pending",
      sessionId,
      approvals: unanswered,
      clientCalls: rest.clientCalls,
      // Answered here: the confirmation is committed, the call no longer waits on an approval.
      calls: rest.calls.map((c) =>
        answered.has(c.id) ? { ...c, state: c.state === "awaiting_approval" ? "incomplete" : c.state } : c,
      ),
    };
  }
  return "continue";
}

function pick(rest: Extract<TurnRest, { kind: "waiting" }>) {
  return { approvals: rest.approvals, clientCalls: rest.clientCalls, calls: rest.calls };
}

function refuseSession(session: SessionRecord | null, name: string, agentId: string): CallOutcome | null {
  if (!session) {
    return { kind: "refused", message: `No session ${JSON.stringify(name)} in this workspace.` };
  }
  const sessionId = session.id;
  if (session.agent.agentId !== agentId) {
    return {
      kind: "refused",
      sessionId,
      message: `Session ${sessionId} is a conversation with agent ${session.agent.agentId}, not with this tool's agent; call that agent's tool, or leave session_id out to start a new session.`,
    };
  }
  if (session.archivedAt !== null || session.status === "terminated") {
    return {
      kind: "refused",
      sessionId,
      message: `Session ${sessionId} is ${session.archivedAt !== null ? "archived" : "terminated"} and takes no more messages; leave session_id out to start a new session.`,
    };
  }
  if (session.status !== "idle") {
    return {
      kind: "refused",
      sessionId,
      message: `Session ${sessionId} is ${session.status}: another turn is going on. Call again when it has ended.`,
    };
  }
  if (session.pending.length > 0) {
    const ids = session.pending.map((p) => p.eventId).join(", ");
    return {
      kind: "refused",
      sessionId,
      message: `Session ${sessionId} waits for answers to calls ${ids} (approvals or client tool results) and takes no new message until then; answer them on the Managed Agents API (POST /v1/sessions/${sessionId}/events).`,
    };
  }
  return null;
}

/** Stops what is running; a session parked on answers keeps them (see the input's rule). */
async function interrupt(services: EdgeServices, workspaceId: string, sessionId: string): Promise<void> {
  try {
    await services.sessions.send(workspaceId, sessionId, [{ kind: "interrupt", onlyWhileWorking: true }], {});
  } catch {
    // The session ended or was deleted meanwhile: there is nothing left to interrupt.
  }
}
