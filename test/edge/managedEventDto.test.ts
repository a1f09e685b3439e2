/**
 * The Managed edge projects typed facts type by type, and shows exactly what it showed when it
 * passed stored bodies through: `{ id, type, ...body, processed_at }`, with `session.usage` broken
 * down by cache TTL. Same fields, same values, same order, byte for byte.
 */
import type { Beta } from "@anthropic-ai/sdk/resources/beta/beta.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCommitted } from "../../src/coordinator/factCodec.js";
import type { CommittedFact, Fact } from "../../src/coordinator/facts.js";
import { eventDto } from "../../src/edge/managed-agents/dto.js";
import { isoTime } from "../../src/kernel/clock.js";
import { storedFact } from "../support/storedFacts.js";

/** The projection as it was: the stored body passed through. */
function passThrough(f: CommittedFact): Record<string, unknown> {
  const usage = f.type === "session.usage" ? (f.body.usage as Record<string, number>) : null;
  const body = usage
    ? {
        ...f.body,
        usage: {
          ...usage,
          cache_creation: {
            ephemeral_5m_input_tokens: usage.cache_creation_input_tokens,
            ephemeral_1h_input_tokens: 0,
          },
        },
      }
    : f.body;
  return { id: f.id, type: f.type, ...body, processed_at: isoTime(f.createdAt) };
}

const committed = (fact: Fact): CommittedFact => ({
  ...fact,
  sessionId: "sesn_1",
  threadId: "sthr_1",
  seq: 3,
  createdAt: 1_700_000_000_000,
});

describe("Managed event projection", () => {
  it("shows every stored shape byte for byte as the pass-through did", () => {
    fc.assert(
      fc.property(
        // The product's own keys (a UI client's message id, a rubric's file id) are never shown, and a
        // compaction shows none of its stored fields.
        storedFact.filter(
          (f) =>
            !Object.keys(f.body).some((key) => key.startsWith("awaken_")) &&
            f.type !== "agent.thread_context_compacted",
        ),
        (fact) => {
          const f = committed(fact);
          expect(JSON.stringify(eventDto(decodeCommitted(f)))).toBe(JSON.stringify(passThrough(f)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("shows a file rubric as its text, never the file's id", () => {
    const f = committed({
      id: "sevt_o",
      type: "user.define_outcome",
      body: {
        outcome_id: "outc_1",
        description: "d",
        rubric: { type: "text", content: "r" },
        max_iterations: null,
        awaken_rubric_file_id: "file_1",
      },
    });
    expect(eventDto(decodeCommitted(f))).toEqual({
      id: "sevt_o",
      type: "user.define_outcome",
      outcome_id: "outc_1",
      description: "d",
      rubric: { type: "text", content: "r" },
      max_iterations: null,
      processed_at: isoTime(f.createdAt),
    });
  });

  it("never shows a compaction's summary, boundary or usage: the SDK's event has none", () => {
    fc.assert(
      fc.property(
        storedFact.filter((f) => f.type === "agent.thread_context_compacted"),
        (fact) => {
          const f = committed(fact);
          expect(JSON.stringify(eventDto(decodeCommitted(f)))).toBe(
            JSON.stringify({ id: f.id, type: f.type, processed_at: isoTime(f.createdAt) }),
          );
        },
      ),
      { numRuns: 50 },
    );
  });

  it("never shows the product's client message id", () => {
    const f = committed({
      id: "sevt_m",
      type: "user.message",
      body: { content: [{ type: "text", text: "hi" }], awaken_client_message_id: "msg_1" },
    });
    expect(eventDto(decodeCommitted(f))).toEqual({
      id: "sevt_m",
      type: "user.message",
      content: [{ type: "text", text: "hi" }],
      processed_at: isoTime(f.createdAt),
    });
  });

  it("shows the threads' facts as the SDK types them, each naming the thread it is about", () => {
    const at = { sessionId: "sesn_1", threadId: "sthr_primary", seq: 4, createdAt: 1_700_000_000_000 };
    const processed_at = isoTime(at.createdAt);
    const content = [{ type: "text" as const, text: "find the 2025 figures" }];
    const created: Beta.Sessions.BetaManagedAgentsSessionThreadCreatedEvent = {
      id: "sevt_c",
      type: "session.thread_created",
      session_thread_id: "sthr_child",
      agent_name: "researcher",
      workflow_run_id: null,
      processed_at,
    };
    expect(
      eventDto({
        ...at,
        id: "sevt_c",
        kind: "thread_created",
        thread: "sthr_child",
        agentName: "researcher",
        workflowRun: null,
      }),
    ).toEqual(created);
    const idle: Beta.Sessions.BetaManagedAgentsSessionThreadStatusIdleEvent = {
      id: "sevt_i",
      type: "session.thread_status_idle",
      session_thread_id: "sthr_child",
      agent_name: "researcher",
      stop_reason: { type: "end_turn" },
      stop_details: null,
      processed_at,
    };
    const status = (to: "running" | "rescheduled" | "terminated") =>
      eventDto({
        ...at,
        id: "sevt_s",
        kind: "thread_status",
        thread: "sthr_child",
        agentName: "researcher",
        transition: { to },
      });
    expect(
      eventDto({
        ...at,
        id: "sevt_i",
        kind: "thread_status",
        thread: "sthr_child",
        agentName: "researcher",
        transition: { to: "idle", reason: { kind: "turn_ended" } },
      }),
    ).toEqual(idle);
    const running: Beta.Sessions.BetaManagedAgentsSessionThreadStatusRunningEvent = {
      id: "sevt_s",
      type: "session.thread_status_running",
      session_thread_id: "sthr_child",
      agent_name: "researcher",
      processed_at,
    };
    expect(status("running")).toEqual(running);
    expect(status("rescheduled")).toEqual({ ...running, type: "session.thread_status_rescheduled" });
    expect(status("terminated")).toEqual({ ...running, type: "session.thread_status_terminated" });
    const sent: Beta.Sessions.BetaManagedAgentsAgentThreadMessageSentEvent = {
      id: "sevt_m",
      type: "agent.thread_message_sent",
      content,
      to_session_thread_id: "sthr_child",
      to_agent_name: "researcher",
      processed_at,
    };
    expect(
      eventDto({
        ...at,
        id: "sevt_m",
        kind: "thread_message_sent",
        toThread: "sthr_child",
        toAgentName: "researcher",
        content,
      }),
    ).toEqual(sent);
    // To or from the primary agent: no agent name at all (the SDK leaves the field out).
    const received: Beta.Sessions.BetaManagedAgentsAgentThreadMessageReceivedEvent = {
      id: "sevt_r",
      type: "agent.thread_message_received",
      content,
      from_session_thread_id: "sthr_primary",
      processed_at,
    };
    const shown = eventDto({
      ...at,
      threadId: "sthr_child",
      id: "sevt_r",
      kind: "thread_message_received",
      fromThread: "sthr_primary",
      fromAgentName: null,
      content,
    });
    expect(shown).toEqual(received);
    expect(Object.keys(shown)).not.toContain("from_agent_name");
  });
});
