import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCommitted } from "../../src/coordinator/factCodec.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import type { JsonObject } from "../../src/kernel/json.js";
import { nextStep, type Step } from "../../src/runtime/nextStep.js";

/** Builds a thread's history: each fact gets the next seq, ids are readable. */
class History {
  readonly facts: CommittedFact[] = [];
  private counter = 0;

  add(type: string, body: JsonObject = {}, id = `sevt_${++this.counter}`): string {
    this.facts.push({
      id,
      type,
      body,
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq: this.facts.length + 1,
      createdAt: 0,
    });
    return id;
  }
  message(text = "hi"): string {
    return this.add("user.message", { content: [{ type: "text", text }] });
  }
  start(): string {
    return this.add("span.model_request_start", { provider: "fake", model: "m" });
  }
  end(startId: string, isError = false): string {
    return this.add("span.model_request_end", { model_request_start_id: startId, is_error: isError });
  }
  /** A successful model request answering with text and `tools` custom tool uses. */
  answer(tools = 0): string[] {
    const start = this.start();
    this.add("agent.message", { content: [{ type: "text", text: "answer" }] });
    const ids = Array.from({ length: tools }, () =>
      this.add("agent.custom_tool_use", { name: "t", input: {} }),
    );
    this.end(start);
    this.add("session.usage", { usage: {} });
    return ids;
  }
  fail(retry: "retrying" | "exhausted" = "retrying"): void {
    this.end(this.start(), true);
    this.add("session.error", { error: { type: "model_overloaded_error", retry_status: { type: retry } } });
    if (retry === "retrying") this.add("session.status_rescheduled");
    else this.idle("retries_exhausted");
  }
  result(toolUseId: string): string {
    return this.add("user.custom_tool_result", { custom_tool_use_id: toolUseId, content: [] });
  }
  idle(type: string, eventIds?: string[]): string {
    const stop: JsonObject = eventIds ? { type, event_ids: eventIds } : { type };
    return this.add("session.status_idle", { stop_reason: stop, stop_details: null });
  }
  step(): Step {
    return nextStep(this.facts.map(decodeCommitted));
  }
}

describe("nextStep on hand-written histories", () => {
  it("an empty history has nothing to do", () => {
    expect(new History().step()).toEqual({ kind: "finish" });
  });

  it("new input calls the model; an answer finishes the turn", () => {
    const h = new History();
    h.message();
    h.add("session.status_running");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
    h.answer();
    expect(h.step()).toEqual({ kind: "finish" });
    h.idle("end_turn");
    h.message("again");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });

  it("system.message alone counts as input", () => {
    const h = new History();
    h.add("system.message", { content: [{ type: "text", text: "be brief" }] });
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });

  it("a request start without an end is closed before anything else", () => {
    const h = new History();
    h.message();
    const first = h.start();
    expect(h.step()).toEqual({ kind: "close_dangling_request", startId: first });
    h.end(first, true);
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
    const second = h.start();
    h.add("agent.custom_tool_use", { name: "t", input: {} });
    expect(h.step()).toEqual({ kind: "close_dangling_request", startId: second });
  });

  it("only failed model requests count toward the model's retries, not a tool's or credential's error", () => {
    const h = new History();
    h.message();
    const failed = h.start();
    h.end(failed, true);
    h.add("session.error", { error: { type: "model_overloaded_error", retry_status: { type: "retrying" } } });
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 1 });
    h.add("session.error", {
      error: {
        type: "credential_host_unreachable_error",
        retry_status: { type: "retrying" },
        credential_id: "c",
      },
    });
    h.add("session.error", {
      error: {
        type: "mcp_connection_failed_error",
        retry_status: { type: "exhausted" },
        mcp_server_name: "m",
      },
    });
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 1 });
  });

  it("input that arrived while the model was answering still needs an answer", () => {
    const h = new History();
    h.message("first");
    const start = h.start();
    h.message("second, queued mid-answer");
    h.add("agent.message", { content: [{ type: "text", text: "answer to first" }] });
    h.end(start);
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
    h.answer();
    expect(h.step()).toEqual({ kind: "finish" });
  });

  it("a span committed with its answer covers only the version its request saw", () => {
    const h = new History();
    h.message("first");
    const overtaken = h.message("second, committed while the model answered the first");
    // The runtime commits the start with the answer; `context_seq` is what the request was built from.
    const start = h.add("span.model_request_start", { provider: "fake", model: "m", context_seq: 1 });
    h.add("agent.message", { content: [{ type: "text", text: "answer to first" }] });
    h.end(start);
    expect(overtaken).toBe("sevt_2");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });

    const seen = new History();
    seen.message("first");
    seen.message("second");
    const both = seen.add("span.model_request_start", { provider: "fake", model: "m", context_seq: 2 });
    seen.add("agent.message", { content: [{ type: "text", text: "answer to both" }] });
    seen.end(both);
    expect(seen.step()).toEqual({ kind: "finish" });
  });

  it("custom tool uses park the run until every one is answered", () => {
    const h = new History();
    h.message();
    const [a, b] = h.answer(2) as [string, string];
    expect(h.step()).toEqual({ kind: "await", eventIds: [a, b] });
    h.idle("requires_action", [a, b]);
    h.result(b);
    expect(h.step()).toEqual({ kind: "await", eventIds: [a] });
    h.message("queued while waiting");
    expect(h.step()).toEqual({ kind: "await", eventIds: [a] });
    h.result(a);
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });

  it("a result for an unknown id does not unpark the run", () => {
    const h = new History();
    h.message();
    const [a] = h.answer(1) as [string];
    h.result("sevt_unknown");
    expect(h.step()).toEqual({ kind: "await", eventIds: [a] });
  });

  it("an interrupt drops pending tool uses and ends the turn; later input starts a new one", () => {
    const h = new History();
    h.message();
    h.answer(2);
    h.add("user.interrupt");
    h.idle("end_turn");
    expect(h.step()).toEqual({ kind: "finish" });
    h.message("after the interrupt");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });

  it("an interrupt during a request still leaves its start to close", () => {
    const h = new History();
    h.message();
    const start = h.start();
    h.add("user.interrupt");
    h.idle("end_turn");
    expect(h.step()).toEqual({ kind: "close_dangling_request", startId: start });
    h.end(start, true);
    expect(h.step()).toEqual({ kind: "finish" });
  });

  it("counts consecutive failures; queued input does not reset the count, an answer does", () => {
    const h = new History();
    h.message();
    h.fail();
    h.add("session.status_running");
    h.fail();
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 2 });
    h.message("are you there?");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 2 });
    h.fail();
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 3 });
    h.answer(1);
    const [pending] = h.facts.filter((f) => f.type === "agent.custom_tool_use").map((f) => f.id);
    h.result(pending as string);
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });

  it("an exhausted turn ends the count: the next message starts from zero", () => {
    const h = new History();
    h.message();
    for (let i = 0; i < 4; i++) h.fail();
    h.fail("exhausted");
    h.message("try again");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });

  it("an interrupt resets the count too", () => {
    const h = new History();
    h.message();
    h.fail();
    h.add("user.interrupt");
    h.message();
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });
});

describe("nextStep with Hand tools (server-run side effects)", () => {
  /** A model answer calling `bash` server-side and, optionally, a custom tool for the client. */
  function handAnswer(h: History, withCustom = false): { hand: string; custom?: string } {
    const start = h.start();
    const hand = h.add("agent.tool_use", { name: "bash", input: { command: "ls" } });
    const custom = withCustom ? h.add("agent.custom_tool_use", { name: "t", input: {} }) : undefined;
    h.end(start);
    return custom ? { hand, custom } : { hand };
  }

  it("a Hand tool use without a result is run first, with no attempt before", () => {
    const h = new History();
    h.message();
    const { hand } = handAnswer(h);
    expect(h.step()).toEqual({
      kind: "run_tool",
      toolUseId: hand,
      name: "bash",
      input: { command: "ls" },
      attempts: 0,
    });
  });

  it("an intent without a result counts as an attempt: a crash happened mid-call", () => {
    const h = new History();
    h.message();
    const { hand } = handAnswer(h);
    h.add("awaken.tool_execution", { tool_use_id: hand, attempt: 1 });
    expect(h.step()).toMatchObject({ kind: "run_tool", toolUseId: hand, attempts: 1 });
    h.add("awaken.tool_execution", { tool_use_id: hand, attempt: 2 });
    expect(h.step()).toMatchObject({ kind: "run_tool", attempts: 2 });
  });

  it("the result is new input for the model", () => {
    const h = new History();
    h.message();
    const { hand } = handAnswer(h);
    h.add("awaken.tool_execution", { tool_use_id: hand, attempt: 1 });
    h.add("agent.tool_result", { tool_use_id: hand, content: [], is_error: false });
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });

  it("server-run tools go before parking on the client's custom tools", () => {
    const h = new History();
    h.message();
    const { hand, custom } = handAnswer(h, true);
    expect(h.step()).toMatchObject({ kind: "run_tool", toolUseId: hand });
    h.add("agent.tool_result", { tool_use_id: hand, content: [], is_error: false });
    expect(h.step()).toEqual({ kind: "await", eventIds: [custom] });
  });

  it("an interrupt drops a pending Hand tool use", () => {
    const h = new History();
    h.message();
    handAnswer(h);
    h.add("user.interrupt");
    expect(h.step()).toEqual({ kind: "finish" });
  });
});

// ---------------------------------------------------------------------------------------------
// Model-based: a small simulation of what the runtime and the input rules commit, with its own
// account of where the run stands, compared with nextStep after every operation.
// ---------------------------------------------------------------------------------------------

type Op =
  | { kind: "message" }
  | { kind: "answer"; tools: number }
  | { kind: "answer_with_queued_input" }
  | { kind: "fail" }
  | { kind: "exhaust" }
  | { kind: "result"; pick: number }
  | { kind: "interrupt" }
  | { kind: "crash" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: "message" }),
  fc.integer({ min: 0, max: 3 }).map<Op>((tools) => ({ kind: "answer", tools })),
  fc.constant<Op>({ kind: "answer_with_queued_input" }),
  fc.constant<Op>({ kind: "fail" }),
  fc.constant<Op>({ kind: "exhaust" }),
  fc.nat(5).map<Op>((pick) => ({ kind: "result", pick })),
  fc.constant<Op>({ kind: "interrupt" }),
  fc.constant<Op>({ kind: "crash" }),
);

class Simulation {
  readonly h = new History();
  pending: string[] = [];
  dangling: string | null = null;
  unanswered = false;
  errors = 0;

  apply(op: Op): void {
    if (this.dangling !== null && op.kind !== "message" && op.kind !== "interrupt") {
      // A new owner closes the crashed request first (no session.error: it is not a model error).
      this.h.end(this.dangling, true);
      this.dangling = null;
    }
    const canCall = this.dangling === null && this.pending.length === 0 && this.unanswered;
    switch (op.kind) {
      case "message":
        this.h.message();
        this.unanswered = true;
        return;
      case "answer":
        if (!canCall) return;
        this.pending = this.h.answer(op.tools);
        this.unanswered = false;
        this.errors = 0;
        if (this.pending.length > 0) this.h.idle("requires_action", [...this.pending]);
        else this.h.idle("end_turn");
        return;
      case "answer_with_queued_input": {
        if (!canCall) return;
        const start = this.h.start();
        this.h.message("queued");
        this.h.add("agent.message", { content: [{ type: "text", text: "partial view" }] });
        this.h.end(start);
        this.errors = 0;
        return;
      }
      case "fail":
        if (!canCall) return;
        this.h.fail();
        this.h.add("session.status_running");
        this.errors += 1;
        return;
      case "exhaust":
        if (!canCall) return;
        this.h.fail("exhausted");
        this.errors = 0;
        return;
      case "result": {
        const id = this.pending[op.pick % Math.max(1, this.pending.length)];
        if (id === undefined) return;
        this.h.result(id);
        this.pending = this.pending.filter((p) => p !== id);
        this.unanswered = true;
        if (this.pending.length === 0) this.h.add("session.status_running");
        else {
          this.h.idle("requires_action", [...this.pending]);
          this.errors = 0;
        }
        return;
      }
      case "interrupt":
        this.h.add("user.interrupt");
        this.h.idle("end_turn");
        this.pending = [];
        this.unanswered = false;
        this.errors = 0;
        return;
      case "crash":
        if (!canCall) return;
        this.dangling = this.h.start();
        return;
    }
  }

  expected(): Step {
    if (this.dangling !== null) return { kind: "close_dangling_request", startId: this.dangling };
    if (this.pending.length > 0) return { kind: "await", eventIds: this.pending };
    if (this.unanswered) return { kind: "call_model", failedAttempts: this.errors };
    return { kind: "finish" };
  }
}

describe("nextStep against a simulation of the runtime", () => {
  it("agrees with the simulation after every operation", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const sim = new Simulation();
        for (const op of ops) {
          sim.apply(op);
          expect(nextStep(sim.h.facts.map(decodeCommitted))).toEqual(sim.expected());
        }
      }),
      { numRuns: 300 },
    );
  });

  it("ignores status, usage and preview facts", () => {
    const noise = fc.constantFrom(
      "session.status_running",
      "session.status_rescheduled",
      "session.usage",
      "agent.thinking",
      "session.updated",
    );
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 25 }),
        fc.array(fc.tuple(fc.nat(), noise), { maxLength: 8 }),
        (ops, inserts) => {
          const sim = new Simulation();
          for (const op of ops) sim.apply(op);
          const facts = [...sim.h.facts];
          for (const [at, type] of inserts) {
            facts.splice(at % (facts.length + 1), 0, {
              ...facts[0],
              id: `noise_${at}`,
              type,
              body: {},
            } as CommittedFact);
          }
          const renumbered = facts.map((fact, index) => ({ ...fact, seq: index + 1 }));
          expect(nextStep(renumbered.map(decodeCommitted))).toEqual(
            nextStep(sim.h.facts.map(decodeCommitted)),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("nextStep with an outcome", () => {
  const define = (h: History, maxIterations: number | null = 3) =>
    h.add("user.define_outcome", {
      outcome_id: "outc_1",
      description: "d",
      rubric: { type: "text", content: "r" },
      max_iterations: maxIterations,
    });
  const evaluation = (h: History, iteration: number, result: string | null) => {
    const start = h.add("span.outcome_evaluation_start", { outcome_id: "outc_1", iteration });
    if (result !== null)
      h.add("span.outcome_evaluation_end", {
        outcome_id: "outc_1",
        outcome_evaluation_start_id: start,
        iteration,
        result,
        explanation: "e",
        usage: {},
      });
    return start;
  };
  const evaluates = (step: Step) => (step.kind === "evaluate_outcome" ? step.outcome : null);

  it("the definition is input; the attempt's answer is graded instead of finishing", () => {
    const h = new History();
    define(h);
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
    h.answer();
    expect(evaluates(h.step())).toMatchObject({ outcomeId: "outc_1", iteration: 0, openStart: null });
  });

  it("needs_revision is the next attempt's input, graded at the next iteration; satisfied finishes", () => {
    const h = new History();
    define(h);
    h.answer();
    evaluation(h, 0, "needs_revision");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
    h.answer();
    expect(evaluates(h.step())).toMatchObject({ iteration: 1, openStart: null });
    evaluation(h, 1, "satisfied");
    expect(h.step()).toEqual({ kind: "finish" });
  });

  it("an evaluation a dead owner left open is resumed under its start, before newer input", () => {
    const h = new History();
    define(h);
    h.answer();
    const start = evaluation(h, 0, null);
    h.message("while grading");
    expect(evaluates(h.step())).toMatchObject({ openStart: { id: start, iteration: 0 } });
  });

  it("max_iterations_reached gets one acknowledgment turn and no further evaluation", () => {
    const h = new History();
    define(h, 1);
    h.answer();
    evaluation(h, 0, "max_iterations_reached");
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
    h.answer();
    expect(h.step()).toEqual({ kind: "finish" });
  });

  it("an interrupt ends the outcome: the next answer is not graded", () => {
    const h = new History();
    define(h);
    h.add("user.interrupt");
    h.message("something else");
    h.answer();
    expect(h.step()).toEqual({ kind: "finish" });
  });
});

describe("an ACP harness's own calls", () => {
  /** A harness prompt (a span) that made one call; `open` leaves it running, else it has a result. */
  function harnessTurn(h: History, open: boolean): string {
    h.message();
    const start = h.start();
    const call = h.add("agent.tool_use", {
      name: "bash",
      input: {},
      evaluated_permission: "allow",
      awaken_harness: true,
    });
    if (!open)
      h.add("agent.tool_result", { tool_use_id: call, content: [], is_error: false, awaken_harness: true });
    h.end(start);
    return call;
  }

  it("a result the harness reported is not input for the Brain: the turn is over", () => {
    const h = new History();
    harnessTurn(h, false);
    expect(h.step()).toEqual({ kind: "finish" });
  });

  it("a call left running by a harness that is gone is closed, never run by the server", () => {
    const h = new History();
    const call = harnessTurn(h, true);
    expect(h.step()).toEqual({ kind: "close_harness_calls", callIds: [call] });
  });

  it("an asked call waits for its confirmation; the decision is input the harness must be told", () => {
    const h = new History();
    h.message();
    const start = h.start();
    const call = h.add("agent.tool_use", {
      name: "edit",
      input: {},
      evaluated_permission: "ask",
      awaken_harness: true,
    });
    h.add("awaken.tool_awaits", {
      tool_use_id: call,
      answer: "tool_confirmation",
      after_allow: "server",
      harness: true,
    });
    h.end(start);
    h.idle("requires_action", [call]);
    expect(h.step()).toEqual({ kind: "await", eventIds: [call] });
    h.add("user.tool_confirmation", { tool_use_id: call, result: "allow" });
    expect(h.step()).toEqual({ kind: "call_model", failedAttempts: 0 });
  });
});
