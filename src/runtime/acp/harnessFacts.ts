/**
 * The facts an ACP Brain commits, and what it reads back from them: the harness's launch stages
 * (`awaken.harness_stage`, shown on every edge that lists events), its own tool calls and results
 * (stored as built-in tool uses, marked as the harness's), and the input a turn's prompt carries.
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CommittedTypedFact, PermissionVerdict, TypedFact } from "../../coordinator/factVocabulary.js";
import { newId } from "../../kernel/ids.js";
import type { JsonObject } from "../../kernel/json.js";

export const HARNESS_STAGE = "awaken.harness_stage";

/** installing → launching → initializing → ready | failed, each committed as it is reached. */
export type HarnessStage = "installing" | "launching" | "initializing" | "ready" | "failed";

export function harnessStage(
  now: number,
  runtime: string,
  stage: HarnessStage,
  detail: JsonObject = {},
): TypedFact {
  return {
    id: newId("sevt", now),
    kind: "internal",
    type: HARNESS_STAGE,
    body: { runtime, stage, ...detail },
  };
}

/** The harness session the last `ready` stage named: a relaunched harness reloads it when it can. */
export function lastHarnessSession(facts: readonly CommittedTypedFact[]): string | null {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind !== "internal" || fact.type !== HARNESS_STAGE || fact.body.stage !== "ready") continue;
    return typeof fact.body.acp_session_id === "string" ? fact.body.acp_session_id : null;
  }
  return null;
}

export function harnessCall(
  now: number,
  name: string,
  input: JsonObject,
  permission: PermissionVerdict,
): TypedFact {
  const id = newId("sevt", now);
  return { id, kind: "tool_call", call: { id, name, input, executor: "harness", permission } };
}

/** What the harness is told of its call that a crash cut off: it may or may not have taken effect. */
export const HARNESS_CALL_CUT =
  "This call was interrupted: the harness running it stopped before it reported a result. It was not " +
  "run again, and whether it took effect is unknown. Check its effects before running it again.";

export function harnessResult(now: number, callId: string, text: string, isError: boolean): TypedFact {
  return {
    id: newId("sevt", now),
    kind: "tool_result",
    callId,
    executor: "harness",
    by: "server",
    content: text === "" ? [] : [{ type: "text", text }],
    isError,
  };
}

/**
 * The text a turn's prompt carries: every user message committed after the last answered harness
 * prompt (or interrupt), in order. Empty when only a decision is to be told.
 */
export function unseenInput(facts: readonly CommittedTypedFact[]): string[] {
  const answeredAt = lastAnsweredAt(facts);
  const texts: string[] = [];
  for (const fact of facts) {
    if (fact.seq <= answeredAt) continue;
    if (fact.kind !== "user_message" && fact.kind !== "system_message") continue;
    const text = fact.content
      .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
      .filter((t) => t !== "")
      .join("\n");
    if (text !== "") texts.push(text);
  }
  return texts;
}

/** Where the last answered harness prompt (or interrupt) stands: what came after is unseen. */
function lastAnsweredAt(facts: readonly CommittedTypedFact[]): number {
  const startedAt = new Map<string, number>();
  let answeredAt = -1;
  for (const fact of facts) {
    if (fact.kind === "model_request_start") startedAt.set(fact.id, fact.contextSeq ?? fact.seq);
    else if (fact.kind === "model_request_end" && !fact.isError)
      answeredAt = Math.max(answeredAt, startedAt.get(fact.startId) ?? fact.seq);
    else if (fact.kind === "interrupt") answeredAt = fact.seq;
  }
  return answeredAt;
}

/**
 * Results of the agent's own tools (custom, MCP) the harness has not seen: committed after the
 * harness that called them was gone, so no MCP call is open to carry them. Told in its next prompt.
 */
export function unseenResults(facts: readonly CommittedTypedFact[]): string[] {
  const answeredAt = lastAnsweredAt(facts);
  const names = new Map<string, string>();
  const notes: string[] = [];
  for (const fact of facts) {
    if (fact.kind === "tool_call" && (fact.call.executor === "client" || fact.call.executor === "mcp"))
      names.set(fact.id, fact.call.name);
    if (fact.kind !== "tool_result" || fact.seq <= answeredAt) continue;
    const name = names.get(fact.callId);
    if (name === undefined) continue;
    const text = textOf(fact.content).slice(0, 20_000);
    notes.push(
      fact.isError
        ? `(Your call of the ${name} tool failed: ${text})`
        : `(The result of your call of the ${name} tool: ${text})`,
    );
  }
  return notes;
}

/**
 * Decisions on the harness's own asked calls that no harness heard: made after the last answered
 * prompt, so the harness that asked was gone (its worker restarted, or another worker took the
 * run). An allowed call was closed as not run; either way the relaunched harness is told.
 */
export function unheardDecisions(facts: readonly CommittedTypedFact[]): string[] {
  const answeredAt = lastAnsweredAt(facts);
  const names = new Map<string, string>();
  const notes: string[] = [];
  for (const fact of facts) {
    if (fact.kind === "tool_call" && fact.call.executor === "harness") names.set(fact.id, fact.call.name);
    if (fact.kind !== "tool_confirmation" || fact.seq <= answeredAt) continue;
    const name = names.get(fact.callId);
    if (name === undefined) continue;
    notes.push(
      fact.allowed
        ? `(Your ${name} call was allowed, but you were restarted before it ran, so it did not run. Make it again if it is still needed.)`
        : `(Your ${name} call was denied${fact.denyMessage ? `: ${fact.denyMessage.slice(0, 2_000)}` : ""}. It did not run.)`,
    );
  }
  return notes;
}

/** A committed result of a call of the agent's tools, as the MCP call that made it is answered. */
export function toolResultOf(facts: readonly CommittedTypedFact[], callId: string): CallToolResult | null {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind !== "tool_result" || fact.callId !== callId) continue;
    const content = fact.content.map((block) =>
      block.type === "text" && typeof block.text === "string"
        ? { type: "text" as const, text: block.text }
        : { type: "text" as const, text: JSON.stringify(block) },
    );
    return { content, isError: fact.isError };
  }
  return null;
}

function textOf(content: readonly JsonObject[]): string {
  return content
    .map((block) =>
      block.type === "text" && typeof block.text === "string" ? block.text : JSON.stringify(block),
    )
    .join("\n");
}

/** The committed history as a plain transcript, to prime a new harness session after a restart. */
export function transcriptOf(facts: readonly CommittedTypedFact[], maxChars = 20_000): string {
  const lines: string[] = [];
  for (const fact of facts) {
    if (fact.kind === "user_message" || fact.kind === "agent_message") {
      const text = fact.content
        .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
        .join("\n");
      if (text !== "") lines.push(`${fact.kind === "user_message" ? "User" : "You"}: ${text}`);
    } else if (fact.kind === "tool_call" && fact.call.executor === "harness") {
      lines.push(`(you called ${fact.call.name} ${JSON.stringify(fact.call.input).slice(0, 300)})`);
    }
  }
  const text = lines.join("\n");
  return text.length > maxChars ? text.slice(text.length - maxChars) : text;
}

/** The harness's decision on a call, read from the confirmation committed for it (null: none yet). */
export function decisionOf(facts: readonly CommittedTypedFact[], callId: string): boolean | null {
  for (let i = facts.length - 1; i >= 0; i--) {
    const fact = facts[i];
    if (fact?.kind === "tool_confirmation" && fact.callId === callId) return fact.allowed;
  }
  return null;
}

/** Harness calls committed without a result (running or decided), oldest first. */
export function openHarnessCalls(facts: readonly CommittedTypedFact[]): string[] {
  const open = new Set<string>();
  for (const fact of facts) {
    if (fact.kind === "tool_call" && fact.call.executor === "harness") open.add(fact.id);
    else if (fact.kind === "tool_result") open.delete(fact.callId);
    else if (fact.kind === "interrupt") open.clear();
  }
  return [...open];
}
