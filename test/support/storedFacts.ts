import fc from "fast-check";
import type { Fact } from "../../src/coordinator/facts.js";
import type { JsonObject } from "../../src/kernel/json.js";

// Stored facts in every shape the product writes today, for the codec's and the edges' properties.

const id = fc.stringMatching(/^sevt_[0-9a-z]{6}$/);
const word = fc.string({ minLength: 1, maxLength: 12 });
const textBlock = word.map((text) => ({ type: "text", text }));
const imageBlock = word.map((url) => ({ type: "image", source: { type: "url", url: `https://x/${url}` } }));
const content = fc.array(fc.oneof(textBlock, imageBlock), { minLength: 1, maxLength: 3 });
const input = fc.dictionary(word, fc.oneof(word, fc.integer(), fc.boolean()), { maxKeys: 3 });
const usage = fc.record({
  input_tokens: fc.nat(),
  output_tokens: fc.nat(),
  cache_read_input_tokens: fc.nat(),
  cache_creation_input_tokens: fc.nat(),
});
const verdict = fc.oneof(
  fc.constant({ evaluated_permission: "allow", evaluation: { type: "always_allow" } }),
  fc.constant({ evaluated_permission: "ask", evaluation: { type: "always_ask" } }),
  word.map((m) => ({
    evaluated_permission: "deny",
    evaluation: { type: "rule", rule: { effect: "deny", match: m } },
  })),
);
/** Optional result fields, present or absent as a client sent them. */
const optionalResult = fc.record(
  { content, is_error: fc.boolean() },
  { requiredKeys: [] },
) as fc.Arbitrary<JsonObject>;

function stored(type: string, body: fc.Arbitrary<JsonObject>): fc.Arbitrary<Fact> {
  return fc.record({ id, type: fc.constant(type), body });
}

/** Every stored shape the product writes (edges' inputs, the coordinator's and the runtime's facts). */
/** A workflow run's error, of a type the SDK names or one a later build may add. */
const workflowError = fc.record({
  type: fc.constantFrom(
    "timeout_error",
    "program_error",
    "unknown_error",
    "thread_limit_error",
    "later_error",
  ),
  message: word,
});

export const storedFact: fc.Arbitrary<Fact> = fc.oneof(
  stored("user.message", fc.record({ content })),
  stored("user.message", fc.record({ content, awaken_client_message_id: word })),
  stored("system.message", fc.record({ content })),
  stored("agent.message", fc.record({ content })),
  stored("agent.thinking", fc.constant({})),
  stored("user.interrupt", fc.constant({})),
  stored("user.interrupt", fc.record({ session_thread_id: word })),
  stored(
    "user.tool_confirmation",
    fc.oneof(
      fc.record({ tool_use_id: id, result: fc.constant("allow") }),
      fc.record({ tool_use_id: id, result: fc.constant("deny") }),
      fc.record({ tool_use_id: id, result: fc.constant("deny"), deny_message: fc.string() }),
    ),
  ),
  stored("agent.custom_tool_use", fc.record({ name: word, input })),
  stored(
    "agent.tool_use",
    fc.tuple(word, input, verdict).map(([name, i, v]) => ({ name, input: i, ...v })),
  ),
  stored(
    "agent.mcp_tool_use",
    fc.tuple(word, word, input, verdict).map(([name, server, i, v]) => ({
      name,
      mcp_server_name: server,
      input: i,
      ...v,
    })),
  ),
  stored(
    "user.custom_tool_result",
    fc.tuple(id, optionalResult).map(([call, rest]) => ({ custom_tool_use_id: call, ...rest })),
  ),
  stored(
    "user.tool_result",
    fc.tuple(id, optionalResult).map(([call, rest]) => ({ tool_use_id: call, ...rest })),
  ),
  stored("agent.tool_result", fc.record({ tool_use_id: id, content, is_error: fc.boolean() })),
  stored("agent.mcp_tool_result", fc.record({ mcp_tool_use_id: id, content, is_error: fc.boolean() })),
  stored("session.status_running", fc.constant({})),
  stored("session.status_rescheduled", fc.constant({})),
  stored("session.status_terminated", fc.constant({})),
  stored(
    "session.status_idle",
    fc.oneof(
      ...["end_turn", "retries_exhausted", "refusal", "some_future_reason"].map((type) =>
        fc.constant({ stop_reason: { type }, stop_details: null }),
      ),
      fc
        .array(id, { minLength: 1, maxLength: 3 })
        .map((ids) => ({ stop_reason: { type: "requires_action", event_ids: ids }, stop_details: null })),
    ),
  ),
  stored(
    "session.error",
    fc
      .tuple(
        fc.constantFrom(
          "model_overloaded_error",
          "mcp_connection_failed_error",
          "credential_host_unreachable_error",
        ),
        word,
        fc.constantFrom("retrying", "exhausted", "terminal"),
        fc.constantFrom<JsonObject>(
          {},
          { mcp_server_name: "docs" },
          { credential_id: "vcrd_1", vault_id: "vlt_1" },
        ),
      )
      .map(([type, message, retry, extra]) => ({
        error: { type, message, retry_status: { type: retry }, ...extra },
      })),
  ),
  stored("session.usage", fc.record({ usage })),
  stored("span.model_request_start", fc.record({ provider: word, model: word })),
  stored(
    "span.model_request_end",
    fc.tuple(id, fc.boolean(), word, word, usage).map(([start, isError, provider, model, u]) => ({
      model_request_start_id: start,
      is_error: isError,
      provider,
      model,
      model_usage: {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
      },
    })),
  ),
  stored(
    "session.updated",
    fc.record(
      { title: fc.option(word), metadata: fc.dictionary(word, word), budget: fc.constant(null) },
      { requiredKeys: [] },
    ) as fc.Arbitrary<JsonObject>,
  ),
  stored("session.deleted", fc.constant({})),
  stored(
    "user.define_outcome",
    fc.record(
      {
        outcome_id: word,
        description: word,
        rubric: word.map((text) => ({ type: "text", content: text })),
        max_iterations: fc.option(fc.integer({ min: 1, max: 20 })),
        awaken_rubric_file_id: word,
      },
      { requiredKeys: ["outcome_id", "description", "rubric", "max_iterations"] },
    ) as fc.Arbitrary<JsonObject>,
  ),
  stored("span.outcome_evaluation_start", fc.record({ outcome_id: word, iteration: fc.nat({ max: 19 }) })),
  stored("span.outcome_evaluation_ongoing", fc.record({ outcome_id: word, iteration: fc.nat({ max: 19 }) })),
  stored(
    "span.outcome_evaluation_end",
    fc
      .tuple(
        word,
        id,
        fc.nat({ max: 19 }),
        fc.constantFrom("satisfied", "needs_revision", "max_iterations_reached", "failed", "interrupted"),
        fc.string(),
        usage,
        fc.option(word, { nil: undefined }),
      )
      .map(([outcome, start, iteration, result, explanation, u, model]) => ({
        outcome_id: outcome,
        outcome_evaluation_start_id: start,
        iteration,
        result,
        explanation,
        usage: {
          input_tokens: u.input_tokens,
          output_tokens: u.output_tokens,
          cache_creation_input_tokens: u.cache_creation_input_tokens,
          cache_read_input_tokens: u.cache_read_input_tokens,
        },
        // The grader's model: the product's own key, absent when no request was made.
        ...(model === undefined ? {} : { awaken_grader_model: model }),
      })),
  ),
  stored("awaken.tool_awaits", fc.record({ tool_use_id: id, answer: fc.constant("tool_result") })),
  stored(
    "awaken.tool_awaits",
    fc.record({
      tool_use_id: id,
      answer: fc.constant("tool_confirmation"),
      after_allow: fc.constantFrom("server", "tool_result"),
    }),
  ),
  stored("awaken.tool_execution", fc.record({ tool_use_id: id, attempt: fc.integer({ min: 1, max: 5 }) })),
  stored(
    "awaken.sandbox_realized",
    fc.record(
      { tier: word, provisioning: word, realize_ms: fc.nat(), package_resolution_id: word },
      { requiredKeys: ["tier", "provisioning", "realize_ms"] },
    ),
  ),
  stored(
    "session.thread_created",
    fc.record({ session_thread_id: word, agent_name: word, workflow_run_id: fc.option(word) }),
  ),
  ...["running", "rescheduled", "terminated"].map((to) =>
    stored(`session.thread_status_${to}`, fc.record({ session_thread_id: word, agent_name: word })),
  ),
  stored(
    "session.thread_status_idle",
    fc
      .tuple(word, word, fc.constantFrom("end_turn", "retries_exhausted", "refusal"))
      .map(([thread, agent, type]) => ({
        session_thread_id: thread,
        agent_name: agent,
        stop_reason: { type },
        stop_details: null,
      })),
  ),
  stored(
    "agent.thread_message_sent",
    fc.record(
      { content, to_session_thread_id: word, to_agent_name: word },
      { requiredKeys: ["content", "to_session_thread_id"] },
    ) as fc.Arbitrary<JsonObject>,
  ),
  stored(
    "agent.thread_message_received",
    fc.record(
      { content, from_session_thread_id: word, from_agent_name: word },
      { requiredKeys: ["content", "from_session_thread_id"] },
    ) as fc.Arbitrary<JsonObject>,
  ),
  stored(
    "agent.thread_context_compacted",
    fc.tuple(word, fc.nat(), word, usage).map(([summary, through, model, u]) => ({
      summary,
      through_seq: through,
      model,
      model_usage: {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
      },
    })),
  ),
  stored(
    "workflow_run.created",
    fc
      .tuple(
        word,
        word,
        fc.option(word),
        fc.array(fc.record({ id: word, name: word, description: fc.option(word) }), { maxLength: 3 }),
      )
      .map(([run, name, description, phases]) => ({ workflow_run_id: run, name, description, phases })),
  ),
  ...(["status_running", "status_idle"] as const).map((change) =>
    stored(`workflow_run.${change}`, fc.record({ workflow_run_id: word })),
  ),
  stored(
    "workflow_run.status_ended",
    fc
      .tuple(word, fc.oneof(fc.constant("completed"), fc.constant("stopped"), workflowError))
      .map(([run, result]) => ({
        workflow_run_id: run,
        result: (typeof result === "string"
          ? { type: result }
          : { type: "error", error: result }) as JsonObject,
      })),
  ),
  stored(
    "workflow_run.error",
    fc.tuple(fc.option(word), workflowError).map(([run, error]) => ({ workflow_run_id: run, error })),
  ),
  stored("workflow_run.phase_started", fc.record({ workflow_run_id: word, workflow_run_phase_id: word })),
  stored(
    "workflow_run.phase_ended",
    fc.record({ workflow_run_id: word, workflow_run_phase_id: word, phase_started_id: word }),
  ),
  // A wire type this build has no codec for: carried through untouched.
  stored("future.phase_started", fc.record({ anything: input })),
  stored("future.created", fc.constant({ nested: { deep: [1, "two", null] } })),
);
