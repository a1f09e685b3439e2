/**
 * A model-based property test of the run state machine, end to end, with the real pure
 * rules only: `planInputs` (the input ledger's decision), `projectFacts` (the session row),
 * `nextStep` (the runtime's decision), `responseFacts` + `toolCatalog` + the permission gate (what a
 * model answer becomes). The simulation plays the stores' part (append with seq, the commit fence's
 * version and epoch checks, the run row's queued/claimed/awaiting states, the ledger's
 * start/resume/cancel effects, claims with a crash count) and the TurnRunner's loop, one commit per
 * step, so client events interleave with the runtime anywhere a real deployment allows.
 *
 * Next to the real state it keeps its own account (the oracle) of who owes what for every tool use,
 * built from the operations alone, and compares after every step.
 */
import { posix } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type {
  AgentDefinition,
  PermissionEffect,
  PermissionPolicy,
  PermissionRule,
  SimpleBuiltinToolName,
  SimpleToolConfig,
} from "../../src/control/agentDefinition.js";
import type { RunOutcome } from "../../src/coordinator/commitOperation.js";
import { type EnvironmentConfig, resolveEnvironmentConfig } from "../../src/coordinator/environmentConfig.js";
import { decodeCommitted, decodeFact, encodeFact } from "../../src/coordinator/factCodec.js";
import {
  type AnswerKind,
  type CommittedFact,
  EMPTY_METER,
  EMPTY_USAGE,
  type Fact,
  type PendingAction,
} from "../../src/coordinator/facts.js";
import type { TypedFact } from "../../src/coordinator/factVocabulary.js";
import { planInputs } from "../../src/coordinator/inputRules.js";
import type { InputContext, InputPlan, RunEffect, SessionRecord } from "../../src/coordinator/ports.js";
import { projectFacts, type SessionProjection } from "../../src/coordinator/sessionProjection.js";
import { toDomainInputs } from "../../src/edge/managed-agents/routes/userInputs.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { newId } from "../../src/kernel/ids.js";
import type { JsonObject } from "../../src/kernel/json.js";
import type { ModelResponse, ModelStopReason } from "../../src/providers/ports.js";
import {
  idle,
  type ModelSpan,
  newFact,
  responseFacts,
  sessionError,
  spanEnd,
  spanStart,
} from "../../src/runtime/modelFacts.js";
import { nextStep, type Step } from "../../src/runtime/nextStep.js";
import { DEFAULT_RETRY_POLICY } from "../../src/runtime/retryPolicy.js";
import { type CatalogEntry, toolCatalog } from "../../src/runtime/toolCatalog.js";
import { indeterminateText, toolExecution, toolResult } from "../../src/runtime/toolFacts.js";
import { TurnRunner } from "../../src/runtime/turnRunner.js";
import { TieredSandboxProvider } from "../../src/sandbox/tieredProvider.js";
import { sessionWithQueuedRun } from "../support/storeFixtures.js";

/** A client event as the Managed Agents wire carries it; the edge's mapping turns it into input. */
interface UserInput {
  type: string;
  body: JsonObject;
}

/** The values the composition roots use (`cli/allInOne.ts`, `cli/worker.ts`). */
const CRASH_BUDGET = 5;
const LEASE_MS = 1_000;
const MAX_RETRIES = DEFAULT_RETRY_POLICY.maxRetries;

// ---------------------------------------------------------------------------------------------
// The session's configuration: a synthetic agent and environment, random permission policies.
// ---------------------------------------------------------------------------------------------

const HAND_NAMES: readonly SimpleBuiltinToolName[] = ["bash", "read", "write", "edit", "glob", "grep"];
const CUSTOM_NAMES = ["lookup", "notify"] as const;
/** What a model may call: custom tools, built-in ones (maybe disabled), and names nobody offered. */
const CALLABLE = [...CUSTOM_NAMES, ...HAND_NAMES, "web_fetch", "mystery"] as const;
const MATCHES = ["*", "ls*", "rm *", "/workspace/*", "/etc/*", "*.ts"] as const;

interface Setup {
  cloud: boolean;
  toolset: boolean;
  defaultEnabled: boolean;
  defaultPolicy: PermissionPolicy;
  overrides: Array<{ name: SimpleBuiltinToolName; enabled: boolean; policy: PermissionPolicy }>;
}

const ruleArb: fc.Arbitrary<PermissionRule> = fc
  .tuple(fc.constantFrom<PermissionEffect>("allow", "ask", "deny"), fc.option(fc.constantFrom(...MATCHES)))
  .map(([effect, match]) => (match === null ? { effect } : { effect, match }));

const policyArb: fc.Arbitrary<PermissionPolicy> = fc.oneof(
  { arbitrary: fc.constant<PermissionPolicy>({ type: "always_allow" }), weight: 3 },
  { arbitrary: fc.constant<PermissionPolicy>({ type: "always_ask" }), weight: 2 },
  {
    arbitrary: fc
      .array(ruleArb, { maxLength: 3 })
      .map<PermissionPolicy>((rules) => (rules.length === 0 ? { type: "auto" } : { type: "auto", rules })),
    weight: 3,
  },
);

const setupArb: fc.Arbitrary<Setup> = fc.record({
  cloud: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 2 }),
  toolset: fc.oneof(
    { arbitrary: fc.constant(true), weight: 5 },
    { arbitrary: fc.constant(false), weight: 1 },
  ),
  defaultEnabled: fc.oneof(
    { arbitrary: fc.constant(true), weight: 4 },
    { arbitrary: fc.constant(false), weight: 1 },
  ),
  defaultPolicy: policyArb,
  overrides: fc.uniqueArray(
    fc.record({ name: fc.constantFrom(...HAND_NAMES), enabled: fc.boolean(), policy: policyArb }),
    { selector: (o) => o.name, maxLength: 3 },
  ),
});

function agentOf(setup: Setup): AgentDefinition {
  const configs: SimpleToolConfig[] = setup.overrides.map((o) => ({
    name: o.name,
    type: o.name,
    enabled: o.enabled,
    permission_policy: o.policy,
  }));
  return {
    name: "state machine",
    description: null,
    system: null,
    model: { id: "claude-test" },
    tools: [
      ...CUSTOM_NAMES.map((name) => ({
        type: "custom" as const,
        name,
        description: `the ${name} tool`,
        input_schema: { type: "object" as const, properties: {} },
      })),
      ...(setup.toolset
        ? [
            {
              type: "agent_toolset_20260401" as const,
              default_config: { enabled: setup.defaultEnabled, permission_policy: setup.defaultPolicy },
              configs,
            },
          ]
        : []),
    ],
    mcp_servers: [],
    skills: [],
    metadata: {},
    multiagent: null,
    execution_identity: null,
  };
}

/** Resolved the way the environment service stores it (every field complete). */
function environmentOf(setup: Setup): EnvironmentConfig {
  return resolveEnvironmentConfig(
    setup.cloud ? { type: "cloud", sandbox: { tier: "none" } } : { type: "self_hosted" },
  );
}

/** The oracle's own reading of the configuration: is `name` a built-in tool here, under which policy. */
function handPolicy(setup: Setup, name: string): PermissionPolicy | null {
  if (!setup.toolset || !(HAND_NAMES as readonly string[]).includes(name)) return null;
  const override = setup.overrides.find((o) => o.name === name);
  const enabled = override ? override.enabled : setup.defaultEnabled;
  if (!enabled) return null;
  return override ? override.policy : setup.defaultPolicy;
}

/** The oracle's own gate: deny > allow > ask among the matching rules; nothing matching → ask. */
function expectedPermission(policy: PermissionPolicy, name: string, input: JsonObject): PermissionEffect {
  if (policy.type === "always_allow") return "allow";
  if (policy.type === "always_ask") return "ask";
  const text = (key: string) => (typeof input[key] === "string" ? (input[key] as string) : "");
  const subject =
    name === "bash"
      ? text("command")
      : name === "glob" || name === "grep"
        ? input.path === undefined
          ? text("pattern")
          : posix.resolve("/workspace", text("path"))
        : posix.resolve("/workspace", text("file_path"));
  // Globs: `*` is any run of characters (MATCHES holds no `?`).
  const matching = (policy.rules ?? []).filter(
    (r) =>
      r.match === undefined ||
      new RegExp(`^${r.match.replace(/[.+^${}()|[\]\\?]/g, "\\$&").replaceAll("*", "[\\s\\S]*")}$`).test(
        subject,
      ),
  );
  for (const effect of ["deny", "allow", "ask"] as const)
    if (matching.some((r) => r.effect === effect)) return effect;
  return "ask";
}

function toolInput(name: string, variant: number): JsonObject {
  const pick = <T>(values: readonly T[]): T => values[variant % values.length] as T;
  switch (name) {
    case "bash":
      return { command: pick(["ls -la", "rm -rf /workspace/tmp", "cat /etc/passwd"]) };
    case "read":
    case "write":
    case "edit":
      return { file_path: pick(["notes.txt", "/workspace/src/a.ts", "../etc/passwd", "/etc/shadow"]) };
    case "glob":
    case "grep": {
      const path = pick([null, "src", "/etc"]);
      return path === null ? { pattern: "*.ts" } : { pattern: "TODO", path };
    }
    default:
      return { q: variant };
  }
}

// ---------------------------------------------------------------------------------------------
// Operations.
// ---------------------------------------------------------------------------------------------

type Block = { kind: "text"; text: string } | { kind: "tool"; name: string; variant: number };
type ModelOutcome =
  | { kind: "answer"; blocks: Block[]; stop: ModelStopReason }
  | { kind: "error"; transient: boolean };

type ClientEvent =
  | { kind: "message" }
  /** The right answer for a pending id (a confirmation: allow or deny). */
  | { kind: "valid"; pick: number; allow: boolean }
  /** An answer the session already accepted, sent again. */
  | { kind: "duplicate"; pick: number }
  | { kind: "unknown"; as: number }
  /** Any answer shape for any tool use of the thread, pending or not: the oracle says if it fits. */
  | { kind: "any_kind"; pick: number; as: number }
  | { kind: "interrupt" };

type Op =
  /** One step of the runtime: a claim, or one commit of the TurnRunner's loop. */
  | { kind: "runtime"; model: ModelOutcome; crashAfter: boolean }
  /** The worker holding the claim dies (its lease lapses; the run stays `claimed` until reclaimed). */
  | { kind: "crash" }
  /** The worker holding the claim dies, then the next ones die before any commit: `times` crashes. */
  | { kind: "crash_storm"; times: number }
  /** One POST of events (a batch: all or nothing). */
  | { kind: "client"; events: ClientEvent[] };

/** Built-in names most often: they are where the gate, confirmations and server runs happen. */
const toolNameArb = fc.oneof(
  { arbitrary: fc.constantFrom(...HAND_NAMES), weight: 4 },
  { arbitrary: fc.constantFrom(...CUSTOM_NAMES), weight: 2 },
  { arbitrary: fc.constantFrom(...CALLABLE), weight: 1 },
);

const blockArb: fc.Arbitrary<Block> = fc.oneof(
  { arbitrary: fc.constantFrom("", "sure").map<Block>((text) => ({ kind: "text", text })), weight: 1 },
  {
    arbitrary: fc
      .tuple(toolNameArb, fc.nat(11))
      .map<Block>(([name, variant]) => ({ kind: "tool", name, variant })),
    weight: 3,
  },
);

const modelArb: fc.Arbitrary<ModelOutcome> = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc.array(blockArb, { maxLength: 4 }),
        fc.constantFrom<ModelStopReason>("end_turn", "tool_use", "refusal", "max_tokens"),
      )
      .map<ModelOutcome>(([blocks, stop]) => ({ kind: "answer", blocks, stop })),
    weight: 8,
  },
  { arbitrary: fc.boolean().map<ModelOutcome>((transient) => ({ kind: "error", transient })), weight: 1 },
);

const clientEventArb: fc.Arbitrary<ClientEvent> = fc.oneof(
  { arbitrary: fc.constant<ClientEvent>({ kind: "message" }), weight: 2 },
  {
    arbitrary: fc
      .tuple(fc.nat(7), fc.boolean())
      .map<ClientEvent>(([pick, allow]) => ({ kind: "valid", pick, allow })),
    weight: 6,
  },
  { arbitrary: fc.nat(7).map<ClientEvent>((pick) => ({ kind: "duplicate", pick })), weight: 1 },
  { arbitrary: fc.nat(3).map<ClientEvent>((as) => ({ kind: "unknown", as })), weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.nat(15), fc.nat(3))
      .map<ClientEvent>(([pick, as]) => ({ kind: "any_kind", pick, as })),
    weight: 2,
  },
  { arbitrary: fc.constant<ClientEvent>({ kind: "interrupt" }), weight: 1 },
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    // `crashAfter`: the worker dies right after this step if it left a tool running (random crashes
    // mid-model-call come from the `crash` operations).
    arbitrary: fc
      .tuple(modelArb, fc.boolean())
      .map<Op>(([model, crashAfter]) => ({ kind: "runtime", model, crashAfter })),
    weight: 24,
  },
  { arbitrary: fc.constant<Op>({ kind: "crash" }), weight: 2 },
  {
    arbitrary: fc
      .integer({ min: 1, max: CRASH_BUDGET + 2 })
      .map<Op>((times) => ({ kind: "crash_storm", times })),
    weight: 1,
  },
  {
    arbitrary: fc
      .array(clientEventArb, { minLength: 1, maxLength: 3 })
      .map<Op>((events) => ({ kind: "client", events })),
    weight: 10,
  },
);

/** A session's life after its first message: up to 80 random operations (`size: "max"`: long ones too). */
const opsArb = fc.array(opArb, { minLength: 1, maxLength: 80, size: "max" });

// ---------------------------------------------------------------------------------------------
// The simulation.
// ---------------------------------------------------------------------------------------------

type RunState = "queued" | "claimed" | "awaiting";
interface RunRow {
  id: string;
  state: RunState;
  epoch: number;
  crashCount: number;
}
type Inflight =
  | { kind: "model"; span: ModelSpan; failedAttempts: number }
  | { kind: "tool"; toolUseId: string; name: string };
interface Worker {
  epoch: number;
  /** The thread version this worker has read up to: it decides from `facts[0, version)` only. */
  version: number;
  inflight: Inflight | null;
}

/** What the oracle expects a batch to do. */
interface BatchForecast {
  accept: boolean;
  owed: Map<string, PendingAction>;
  serverOwed: Set<string>;
  interrupted: Set<string>;
  run: RunState | null;
}

const TEXT_ANSWER: ModelOutcome = {
  kind: "answer",
  blocks: [{ kind: "text", text: "done" }],
  stop: "end_turn",
};
const RESULT_TYPES = new Set(["agent.tool_result", "user.tool_result", "user.custom_tool_result"]);
const INPUT_TYPES = new Set([
  "user.message",
  "system.message",
  "user.custom_tool_result",
  "user.tool_result",
  "agent.tool_result",
]);

/** How often the interesting paths ran: a property that stops reaching them must say so. */
type Path =
  | "park"
  | "resume"
  | "partial_answer"
  | "answer_while_running"
  | "custom_result"
  | "self_hosted_result"
  | "confirm_allow"
  | "confirm_deny"
  | "gate_deny"
  | "server_tool"
  | "rerun_after_crash"
  | "indeterminate_after_crash"
  | "dangling_request_closed"
  | "rebased_answer"
  | "interrupt_while_claimed"
  | "interrupt_while_parked"
  | "rejected_batch"
  | "crash_budget_failure";

class Simulation {
  readonly facts: CommittedFact[] = [];
  projection: SessionProjection = { status: "idle", pending: [], usage: EMPTY_USAGE, meter: EMPTY_METER };
  run: RunRow | null = null;
  worker: Worker | null = null;
  private now = 1_750_000_000_000;
  readonly catalog: Map<string, CatalogEntry>;

  // ---- the oracle: its own account, from the operations alone ----
  /** What the client owes, per tool use, in call order (a Map keeps a key's place on update). */
  owed = new Map<string, PendingAction>();
  /** Allowed built-in calls of a cloud environment: the server owes their results. */
  serverOwed = new Set<string>();
  interrupted = new Set<string>();
  readonly callOrder: string[] = [];
  readonly calls = new Map<string, { hand: boolean; name: string }>();
  readonly attempts = new Map<string, number>();
  /** `${type}:${id}` of every answer the session accepted. */
  readonly accepted = new Set<string>();
  readonly acceptedAnswers: UserInput[] = [];
  openSpan: string | null = null;
  lastInputSeq = -1;
  answeredSeq = -1;
  /** Model errors since the last answer in this turn (an idle or an interrupt ends a turn). */
  errorsSinceAnswer = 0;

  constructor(
    readonly setup: Setup,
    private readonly options: { strictOrder: boolean; seen: Map<Path, number> },
  ) {
    this.catalog = toolCatalog(agentOf(setup), environmentOf(setup));
  }

  private saw(path: Path): void {
    this.options.seen.set(path, (this.options.seen.get(path) ?? 0) + 1);
  }

  private tick(): number {
    this.now += 1;
    return this.now;
  }

  /** What the stores do on any append: number the facts, fold them into the session row. */
  private append(facts: readonly Fact[]): CommittedFact[] {
    const now = this.tick();
    const committed = facts.map((fact, index) => ({
      ...fact,
      sessionId: "sesn_sim",
      threadId: "sthr_sim",
      seq: this.facts.length + 1 + index,
      createdAt: now,
    }));
    this.facts.push(...committed);
    this.projection = projectFacts(this.projection, facts.map(decodeFact), this.now);
    // The oracle's input/answer bookkeeping (the rule nextStep's docs state in words).
    const startSeq = new Map(
      this.facts.filter((f) => f.type === "span.model_request_start").map((f) => [f.id, f.seq]),
    );
    for (const fact of committed) {
      if (fact.type === "span.model_request_start") this.openSpan = fact.id;
      if (fact.type === "span.model_request_end") {
        const start = String(fact.body.model_request_start_id);
        if (this.openSpan === start) this.openSpan = null;
        if (fact.body.is_error !== true) {
          this.answeredSeq = Math.max(this.answeredSeq, startSeq.get(start) ?? -1);
          this.errorsSinceAnswer = 0;
        }
      }
      if (INPUT_TYPES.has(fact.type)) this.lastInputSeq = fact.seq;
      if (fact.type === "session.error") this.errorsSinceAnswer += 1;
      if (fact.type === "session.status_idle") this.errorsSinceAnswer = 0;
      if (fact.type === "user.interrupt") {
        this.answeredSeq = fact.seq;
        this.errorsSinceAnswer = 0;
      }
    }
    return committed;
  }

  // ---- the runtime: claims, and the TurnRunner's loop one commit at a time ----

  private claim(): void {
    const run = this.run!;
    // Reclaiming an expired lease counts a crash; a queued run is claimed afresh.
    if (run.state === "claimed") run.crashCount += 1;
    run.epoch += 1;
    run.state = "claimed";
    this.worker = { epoch: run.epoch, version: this.facts.length, inflight: null };
    if (run.crashCount > CRASH_BUDGET) {
      this.saw("crash_budget_failure");
      const now = this.tick();
      // As TurnRunner does: a request a dead owner left open is closed in the same commit.
      const step = nextStep(this.facts.map(decodeCommitted));
      const start =
        step.kind === "close_dangling_request" ? this.facts.find((f) => f.id === step.startId) : undefined;
      const close =
        step.kind === "close_dangling_request"
          ? [
              spanEnd(
                { startId: step.startId, provider: String(start?.body.provider), model: "claude-test" },
                now,
                null,
                true,
              ),
            ]
          : [];
      this.commitLanding(
        [
          ...close,
          sessionError(
            now,
            "unknown_error",
            `the run was interrupted by ${run.crashCount} worker crashes`,
            "exhausted",
          ),
          idle(now, { kind: "retries_exhausted" }),
        ],
        "failed",
      );
    }
  }

  /** The commit fence (epoch + version) and the settle, as `sqlDispatchStore.commit` does them. */
  private commit(typed: TypedFact[], settle?: RunOutcome): "ok" | "conflict" {
    // As the run context does: the runtime builds typed facts, the fence stores their encoding.
    const facts = typed.map(encodeFact);
    const worker = this.worker!;
    const run = this.run;
    // A cancel or a reclaim removes the worker at once, so a live worker always holds the claim.
    expect(run?.state === "claimed" && run.epoch === worker.epoch, "a live worker holds the claim").toBe(
      true,
    );
    if (worker.version !== this.facts.length) {
      worker.version = this.facts.length; // the runner catches up after a conflict
      return "conflict";
    }
    this.append(facts);
    this.runtimeOracle(facts);
    run!.crashCount = 0;
    worker.version = this.facts.length;
    if (settle) {
      if (settle === "awaiting") {
        expect(this.projection.pending.length, "a run parks only while something is pending").toBeGreaterThan(
          0,
        );
        run!.state = this.projection.pending.length > 0 ? "awaiting" : "queued";
        this.saw("park");
      } else {
        this.run = null;
      }
      this.worker = null;
    }
    return "ok";
  }

  private commitLanding(facts: TypedFact[], settle?: RunOutcome): void {
    while (this.commit(facts, settle) === "conflict") {}
  }

  runtimeStep(model: ModelOutcome): void {
    const run = this.run;
    if (!run || run.state === "awaiting") return;
    if (!this.worker) {
      this.claim();
      return;
    }
    const worker = this.worker;
    const now = this.tick();
    if (worker.inflight?.kind === "model") {
      this.modelAnswers(worker.inflight, model);
      return;
    }
    if (worker.inflight?.kind === "tool") {
      // The sandbox finished: its result lands whatever input arrived meanwhile.
      const { toolUseId, name } = worker.inflight;
      worker.inflight = null;
      this.saw((this.attempts.get(toolUseId) ?? 0) > 1 ? "rerun_after_crash" : "server_tool");
      this.commitLanding([toolResult(now, toolUseId, `${name}: ok`, false)]);
      return;
    }
    const step = nextStep(this.facts.slice(0, worker.version).map(decodeCommitted));
    switch (step.kind) {
      case "close_dangling_request": {
        const start = this.facts.find((f) => f.id === step.startId);
        const span = { startId: step.startId, provider: String(start?.body.provider), model: "claude-test" };
        if (this.commit([spanEnd(span, now, null, true)]) === "ok") this.saw("dangling_request_closed");
        return;
      }
      case "run_tool": {
        const entry = this.catalog.get(step.name);
        if (entry?.kind !== "hand") {
          this.commitLanding([
            toolResult(now, step.toolUseId, `the ${step.name} tool is not available`, true),
          ]);
          return;
        }
        if (step.attempts > 0 && !entry.tool.repeatable) {
          this.saw("indeterminate_after_crash");
          this.commitLanding([toolResult(now, step.toolUseId, indeterminateText(step.name), true)]);
          return;
        }
        if (this.commit([toolExecution(now, step.toolUseId, step.attempts + 1)]) === "ok") {
          worker.inflight = { kind: "tool", toolUseId: step.toolUseId, name: step.name };
        }
        return;
      }
      case "await":
        this.commit([idle(now, { kind: "waiting", callIds: step.eventIds })], "awaiting");
        return;
      case "finish":
        this.commit([idle(now, { kind: "turn_ended" })], "done");
        return;
      case "call_model": {
        const span: ModelSpan = { startId: `sevt_start_${now}`, provider: "fake", model: "claude-test" };
        if (this.commit([spanStart(span)]) === "ok") {
          worker.inflight = { kind: "model", span, failedAttempts: step.failedAttempts };
        }
        return;
      }
    }
  }

  /** `TurnRunner.callModel` after the provider returned (or failed). */
  private modelAnswers(inflight: Extract<Inflight, { kind: "model" }>, model: ModelOutcome): void {
    this.worker!.inflight = null;
    const now = this.tick();
    const { span } = inflight;
    if (model.kind === "error") {
      const attempt = inflight.failedAttempts + 1;
      if (model.transient && attempt <= MAX_RETRIES) {
        this.commitLanding([
          spanEnd(span, now, null, true),
          sessionError(now, "model_overloaded_error", "overloaded", "retrying"),
          newFact(now, { kind: "status_rescheduled" }),
        ]);
        this.commitLanding([newFact(this.tick(), { kind: "status_running" })]);
      } else {
        this.commitLanding(
          [
            spanEnd(span, now, null, true),
            sessionError(now, "model_request_failed_error", "failed", "exhausted"),
            idle(now, { kind: "retries_exhausted" }),
          ],
          "failed",
        );
      }
      return;
    }
    const response: ModelResponse = {
      content: model.blocks.map((b, i) =>
        b.kind === "text"
          ? { type: "text" as const, text: b.text }
          : {
              type: "tool_use" as const,
              id: `toolu_${i}`,
              name: b.name,
              input: toolInput(b.name, b.variant),
            },
      ),
      stopReason: model.stop,
      usage: {
        inputTokens: 3,
        outputTokens: 5,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      },
    };
    const plan = responseFacts(response, `sevt_msg_${now}`, now, this.catalog);
    const body = [
      ...plan.facts,
      spanEnd(span, now, response.usage, false),
      newFact(now, { kind: "usage", usage: EMPTY_USAGE }),
    ];
    if (plan.serverRuns > 0 || plan.denied > 0) {
      this.commitLanding(body);
      return;
    }
    const terminal =
      plan.awaiting.length > 0
        ? {
            fact: idle(now, { kind: "waiting", callIds: plan.awaiting }),
            settle: "awaiting" as const,
          }
        : model.stop === "refusal"
          ? { fact: idle(now, { kind: "refusal" }), settle: "done" as const }
          : { fact: idle(now, { kind: "turn_ended" }), settle: "done" as const };
    if (this.commit([...body, terminal.fact], terminal.settle) === "conflict") {
      // New input landed while the model answered: the answer is rebased without its terminal part.
      this.saw("rebased_answer");
      this.commitLanding(body);
    }
  }

  crash(): void {
    // The lease lapses: the run stays claimed (by nobody) until a claim counts the crash.
    this.worker = null;
  }

  crashStorm(times: number): void {
    for (let i = 0; i < times; i++) {
      if (!this.run || this.run.state === "awaiting") return;
      if (!this.worker) this.claim();
      if (!this.worker) return; // the claim ended the run (crash budget)
      this.crash();
    }
  }

  /** The oracle's reading of what the runtime committed (never of the ledger's facts). */
  private runtimeOracle(facts: readonly Fact[]): void {
    const deniedByGate = new Set<string>();
    for (const fact of facts) {
      const toolUseId = String(fact.body.tool_use_id);
      switch (fact.type) {
        case "agent.custom_tool_use": {
          const name = String(fact.body.name);
          expect(handPolicy(this.setup, name), `${name} is not a built-in tool here`).toBeNull();
          this.callOrder.push(fact.id);
          this.calls.set(fact.id, { hand: false, name });
          this.owed.set(fact.id, { eventId: fact.id, kind: "client_tool_result" });
          break;
        }
        case "agent.tool_use": {
          const name = String(fact.body.name);
          const policy = handPolicy(this.setup, name);
          expect(policy, `${name} is a built-in tool here`).not.toBeNull();
          const permission = expectedPermission(policy!, name, fact.body.input as JsonObject);
          expect(fact.body.evaluated_permission, `the gate's decision for ${name}`).toBe(permission);
          this.callOrder.push(fact.id);
          this.calls.set(fact.id, { hand: true, name });
          if (permission === "deny") {
            deniedByGate.add(fact.id);
            this.saw("gate_deny");
          } else if (permission === "ask") {
            this.owed.set(fact.id, {
              eventId: fact.id,
              kind: "confirmation",
              afterAllow: this.setup.cloud ? "server" : "client",
            });
          } else if (this.setup.cloud) this.serverOwed.add(fact.id);
          else this.owed.set(fact.id, { eventId: fact.id, kind: "server_tool_result" });
          break;
        }
        case "awaken.tool_execution":
          expect(this.serverOwed.has(toolUseId), "only a call the server owes is started").toBe(true);
          this.attempts.set(toolUseId, Number(fact.body.attempt));
          break;
        case "agent.tool_result":
          expect(
            deniedByGate.has(toolUseId) || this.serverOwed.has(toolUseId),
            "the runtime answers only a call the server owes or the gate denied",
          ).toBe(true);
          deniedByGate.delete(toolUseId);
          this.serverOwed.delete(toolUseId);
          break;
      }
    }
    expect([...deniedByGate], "every denied call gets its error result in the same commit").toEqual([]);
  }

  // ---- the client: batches through the input rules ----

  /** The answers a client could give now, as concrete events. */
  eventFor(event: ClientEvent): UserInput {
    switch (event.kind) {
      case "message":
        return { type: "user.message", body: { content: [{ type: "text", text: "hello" }] } };
      case "interrupt":
        return { type: "user.interrupt", body: {} };
      case "valid": {
        const owed = [...this.owed.values()];
        const target = owed[event.pick % Math.max(1, owed.length)];
        // Nothing pending: the "right answer" is for a call that is not waiting (rejected).
        return target
          ? answerFor(target.eventId, target.kind, event.allow)
          : answerFor(this.callOrder.at(-1) ?? "sevt_none", "client_tool_result", true);
      }
      case "duplicate": {
        const previous = this.acceptedAnswers[event.pick % Math.max(1, this.acceptedAnswers.length)];
        return previous ?? answerFor("sevt_never_seen", "server_tool_result", true);
      }
      case "unknown":
        return answerFor(`sevt_unknown_${event.as}`, ANSWER_KINDS[event.as % 3]!, event.as === 3);
      case "any_kind": {
        const id = this.callOrder[event.pick % Math.max(1, this.callOrder.length)] ?? "sevt_none";
        return answerFor(id, ANSWER_KINDS[event.as % 3]!, event.as !== 3);
      }
    }
  }

  /** The oracle's forecast for a batch: accepted or not, and what it leaves behind. */
  private forecast(inputs: readonly UserInput[]): BatchForecast {
    const owed = new Map(this.owed);
    const serverOwed = new Set(this.serverOwed);
    const interrupted = new Set(this.interrupted);
    let run: RunState | null = this.run?.state ?? null;
    const reject = (): BatchForecast => ({ accept: false, owed, serverOwed, interrupted, run });
    const answered = () => {
      if (run === "awaiting" && owed.size === 0) run = "queued";
    };
    for (const input of inputs) {
      const id = String(input.body.tool_use_id ?? input.body.custom_tool_use_id);
      switch (input.type) {
        case "user.message":
          if (run === null) run = "queued";
          break;
        case "user.interrupt":
          for (const pending of [...owed.keys(), ...serverOwed]) interrupted.add(pending);
          owed.clear();
          serverOwed.clear();
          run = null;
          break;
        case "user.custom_tool_result":
        case "user.tool_result": {
          const kind = input.type === "user.tool_result" ? "server_tool_result" : "client_tool_result";
          if (owed.get(id)?.kind !== kind) return reject();
          owed.delete(id);
          answered();
          break;
        }
        case "user.tool_confirmation": {
          const asked = owed.get(id);
          if (asked?.kind !== "confirmation") return reject();
          if (input.body.result !== "allow") owed.delete(id);
          else if (asked.afterAllow === "client") owed.set(id, { eventId: id, kind: "server_tool_result" });
          else {
            owed.delete(id);
            serverOwed.add(id);
          }
          answered();
          break;
        }
      }
    }
    return { accept: true, owed, serverOwed, interrupted, run };
  }

  private context(): InputContext {
    const run = this.run;
    const lastSpan = this.facts.findLast(
      (f) => f.type === "span.model_request_start" || f.type === "span.model_request_end",
    );
    return {
      session: {
        id: "sesn_sim",
        archivedAt: null,
        status: this.projection.status,
        pending: this.projection.pending.map((p) => ({ ...p })),
        usage: this.projection.usage,
      } as SessionRecord,
      activeRun: run ? { id: run.id, state: run.state, epoch: run.epoch } : null,
      openModelRequest:
        run?.state === "claimed" && lastSpan?.type === "span.model_request_start"
          ? {
              startId: lastSpan.id,
              provider: String(lastSpan.body.provider),
              model: String(lastSpan.body.model),
            }
          : null,
    };
  }

  /** One POST: `planInputs` inside the ledger's transaction, then the append and the run effects. */
  send(inputs: UserInput[]): boolean {
    const expected = this.forecast(inputs);
    const ctx = this.context();
    const before = structuredClone(ctx);
    let plan: InputPlan;
    try {
      plan = planInputs(ctx, toDomainInputs(inputs.map((i) => ({ type: i.type, ...i.body }))), this.tick());
    } catch (error) {
      // A rejected batch changes nothing: its facts and effects are never applied.
      expect(error, "a rejected batch is an AwakenError").toBeInstanceOf(AwakenError);
      expect((error as AwakenError).code).toBe("tool_use_not_pending");
      expect(expected.accept, `the oracle accepts ${JSON.stringify(inputs)}`).toBe(false);
      expect(ctx, "planning is pure").toEqual(before);
      this.saw("rejected_batch");
      return false;
    }
    expect(ctx, "planning is pure").toEqual(before);
    expect(expected.accept, `the oracle rejects ${JSON.stringify(inputs)}`).toBe(true);
    expect(plan.echoIds).toHaveLength(inputs.length);
    for (const input of inputs) {
      if (input.type === "user.message" || input.type === "user.interrupt") continue;
      const key = `${input.type}:${String(input.body.tool_use_id ?? input.body.custom_tool_use_id)}`;
      expect(this.accepted.has(key), `(4) ${key} accepted twice`).toBe(false);
      this.accepted.add(key);
      this.acceptedAnswers.push(input);
      if (input.type === "user.custom_tool_result") this.saw("custom_result");
      if (input.type === "user.tool_result") this.saw("self_hosted_result");
      if (input.type === "user.tool_confirmation")
        this.saw(input.body.result === "allow" ? "confirm_allow" : "confirm_deny");
      if (this.run?.state === "claimed") this.saw("answer_while_running");
    }
    if (inputs.some((i) => i.type === "user.interrupt")) {
      if (this.run?.state === "claimed") this.saw("interrupt_while_claimed");
      if (this.run?.state === "awaiting") this.saw("interrupt_while_parked");
    }
    const wasAwaiting = this.run?.state === "awaiting";
    this.append(plan.facts);
    this.applyEffects(plan.effects);
    if (plan.effects.some((e) => e.kind === "cancel")) {
      expect(this.openSpan, "(6) a cancel closes the model request the run left open").toBeNull();
    }
    this.owed = expected.owed;
    this.serverOwed = expected.serverOwed;
    this.interrupted = expected.interrupted;
    expect(this.run?.state ?? null, "the run state the oracle expects after the batch").toBe(expected.run);
    if (wasAwaiting && this.run?.state === "queued") {
      expect(this.projection.pending, "(3) a run resumes only when nothing is pending").toEqual([]);
      this.saw("resume");
    }
    if (wasAwaiting && this.run?.state === "awaiting") this.saw("partial_answer");
    return true;
  }

  /** The ledger's effects, in order, against the run row as `sqlInputLedger.append` applies them. */
  private applyEffects(effects: readonly RunEffect[]): void {
    const active = this.run;
    let started: RunRow | null = null;
    let cancelled = false;
    for (const effect of effects) {
      if (effect.kind === "start") {
        started = { id: effect.runId, state: "queued", epoch: 0, crashCount: 0 };
      } else if (effect.kind === "resume" && active) {
        if (active.state === "awaiting") active.state = "queued";
      } else if (effect.kind === "cancel" && active) {
        cancelled = true;
      }
    }
    if (cancelled) {
      // The epoch advances: whatever the worker holding the claim does next is rejected.
      this.run = null;
      this.worker = null;
    }
    if (started) {
      expect(this.run, "a run starts only when none is active").toBeNull();
      this.run = started;
    }
  }

  // ---- the invariants, after every step ----

  check(): void {
    const step = nextStep(this.facts.map(decodeCommitted));
    const owedIds = this.callOrder.filter((id) => this.owed.has(id));

    // (1) the projection's pending list is exactly what the oracle says is owed…
    const asSet = (pending: readonly PendingAction[]) =>
      pending.map((p) => `${p.eventId}:${p.kind}:${p.kind === "confirmation" ? p.afterAllow : ""}`).sort();
    expect(asSet(this.projection.pending), "(1) projection pending = what the client owes").toEqual(
      asSet([...this.owed.values()]),
    );
    expect(new Set(this.projection.pending.map((p) => p.eventId)).size, "one entry per id").toBe(
      this.projection.pending.length,
    );
    // …and nextStep waits for the same ids, after the server's own work and a dangling request.
    const serverFirst = this.callOrder.find((id) => this.serverOwed.has(id));
    const expected: Step =
      this.openSpan !== null
        ? { kind: "close_dangling_request", startId: this.openSpan }
        : serverFirst !== undefined
          ? {
              kind: "run_tool",
              toolUseId: serverFirst,
              name: this.calls.get(serverFirst)!.name,
              input: this.facts.find((f) => f.id === serverFirst)!.body.input as JsonObject,
              attempts: this.attempts.get(serverFirst) ?? 0,
            }
          : owedIds.length > 0
            ? { kind: "await", eventIds: owedIds }
            : this.lastInputSeq > this.answeredSeq
              ? { kind: "call_model", failedAttempts: this.errorsSinceAnswer }
              : { kind: "finish" };
    expect(step, "(1) nextStep agrees with the oracle").toEqual(expected);

    // (2) no tool use is ever dropped: each is answered, interrupted, owed by the client or the server.
    const results = this.facts.filter((f) => RESULT_TYPES.has(f.type));
    const resolved = new Set(results.map((f) => String(f.body.tool_use_id ?? f.body.custom_tool_use_id)));
    for (const id of this.callOrder) {
      const states = [resolved.has(id), this.interrupted.has(id), this.owed.has(id), this.serverOwed.has(id)];
      expect(states.filter(Boolean), `(2) tool use ${id} is in exactly one state`).toHaveLength(1);
    }

    // (5) the session status agrees with the run's state.
    const lastStatus = this.facts.findLast((f) => f.type.startsWith("session.status_"));
    const stop =
      lastStatus?.type === "session.status_idle" ? (lastStatus.body.stop_reason as JsonObject) : null;
    if (this.run?.state === "awaiting") {
      expect(this.projection.status, "(5) a parked run leaves the session idle").toBe("idle");
      expect(stop?.type, "(5) …with requires_action").toBe("requires_action");
      // (1) …listing exactly the ids the session waits for.
      const listed = (stop?.event_ids as string[] | undefined) ?? [];
      expect([...listed].sort(), "(1) the last requires_action lists what is pending").toEqual(
        [...owedIds].sort(),
      );
      if (this.options.strictOrder) {
        // …in call order, as the runtime lists them, and the session's pending list keeps that order.
        expect(listed, "(1) the last requires_action lists the pending ids in call order").toEqual(owedIds);
        expect(
          this.projection.pending.map((p) => p.eventId),
          "(1) the session's pending list is in call order, as the last requires_action",
        ).toEqual(listed);
      }
      // (3) parked only on the client: a call the server may run (a cloud confirmation allowed while
      // other answers are missing) waits for the resume with the rest.
      expect(this.owed.size, "(3) a parked run waits for the client").toBeGreaterThan(0);
    } else if (this.run) {
      expect(["running", "rescheduling"], "(5) a queued or claimed run leaves the session running").toContain(
        this.projection.status,
      );
    } else {
      expect(this.projection.status, "(5) without a run the session is idle").toBe("idle");
      expect(stop?.type ?? "none", "(5) …and not waiting for answers nobody would read").not.toBe(
        "requires_action",
      );
    }

    // (6) results: one per tool use, never for a call that was not made, never after its interrupt.
    const madeAt = new Map<string, { seq: number; hand: boolean }>();
    const answered = new Set<string>();
    let lastInterrupt = -1;
    const opened = new Set<string>();
    const closed = new Set<string>();
    for (const fact of this.facts) {
      if (fact.type === "agent.custom_tool_use") madeAt.set(fact.id, { seq: fact.seq, hand: false });
      if (fact.type === "agent.tool_use") madeAt.set(fact.id, { seq: fact.seq, hand: true });
      if (fact.type === "user.interrupt") lastInterrupt = fact.seq;
      if (fact.type === "span.model_request_start") opened.add(fact.id);
      if (fact.type === "span.model_request_end") {
        const start = String(fact.body.model_request_start_id);
        expect(opened.has(start) && !closed.has(start), `(6) request ${start} is ended once`).toBe(true);
        closed.add(start);
      }
      if (!RESULT_TYPES.has(fact.type)) continue;
      const id = String(fact.body.tool_use_id ?? fact.body.custom_tool_use_id);
      const call = madeAt.get(id);
      expect(call, `(6) ${fact.type} for ${id}, a call that was never made`).toBeDefined();
      expect(call!.hand, `(6) ${fact.type} answers the right kind of call`).toBe(
        fact.type !== "user.custom_tool_result",
      );
      expect(call!.seq > lastInterrupt, `(6) ${fact.type} for ${id}, interrupted before`).toBe(true);
      expect(answered.has(id), `(6) a second result for ${id}`).toBe(false);
      answered.add(id);
    }
  }

  /** (7) The client sends one more message and answers everything; workers stop crashing. */
  drain(): void {
    expect(this.send([{ type: "user.message", body: { content: [{ type: "text", text: "last" }] } }])).toBe(
      true,
    );
    const lastMessage = this.facts.findLast((f) => f.type === "user.message")!.seq;
    let retries = 0;
    for (let i = 0; i < 300; i++) {
      if (this.run && this.run.state !== "awaiting") this.runtimeStep(TEXT_ANSWER);
      else if (this.owed.size > 0) {
        const [first] = this.owed.values();
        expect(this.send([answerFor(first!.eventId, first!.kind, true)])).toBe(true);
      } else if (
        this.run === null &&
        nextStep(this.facts.map(decodeCommitted)).kind !== "finish" &&
        retries < CRASH_BUDGET
      ) {
        // The turn failed (its run past the crash budget): a client asks again.
        retries += 1;
        expect(this.send([{ type: "user.message", body: { content: [] } }])).toBe(true);
      } else break;
      this.check();
    }
    expect(this.run, "(7) the run finished").toBeNull();
    expect(this.owed.size + this.serverOwed.size, "(7) nothing is owed").toBe(0);
    expect(nextStep(this.facts.map(decodeCommitted)), "(7) nothing is left to do").toEqual({
      kind: "finish",
    });
    const lastStatus = this.facts.findLast((f) => f.type.startsWith("session.status_"))!;
    expect(lastStatus.body.stop_reason, "(7) the turn ended").toEqual({ type: "end_turn" });
    expect(this.answeredSeq, "(7) the last message was answered").toBeGreaterThan(lastMessage);
  }
}

const ANSWER_KINDS: readonly AnswerKind[] = ["client_tool_result", "server_tool_result", "confirmation"];

function answerFor(id: string, kind: AnswerKind, allow: boolean): UserInput {
  switch (kind) {
    case "client_tool_result":
      return { type: "user.custom_tool_result", body: { custom_tool_use_id: id, content: [] } };
    case "server_tool_result":
      return { type: "user.tool_result", body: { tool_use_id: id, content: [], is_error: false } };
    case "confirmation":
      return allow
        ? { type: "user.tool_confirmation", body: { tool_use_id: id, result: "allow" } }
        : { type: "user.tool_confirmation", body: { tool_use_id: id, result: "deny", deny_message: "no" } };
  }
}

function play(sim: Simulation, op: Op): void {
  switch (op.kind) {
    case "runtime":
      sim.runtimeStep(op.model);
      if (op.crashAfter && sim.worker?.inflight?.kind === "tool") sim.crash();
      break;
    case "crash":
      sim.crash();
      break;
    case "crash_storm":
      sim.crashStorm(op.times);
      break;
    case "client":
      sim.send(op.events.map((e) => sim.eventFor(e)));
      break;
  }
}

function live(setup: Setup, ops: readonly Op[], options: ConstructorParameters<typeof Simulation>[1]): void {
  const sim = new Simulation(setup, options);
  sim.check();
  sim.send([sim.eventFor({ kind: "message" })]);
  sim.check();
  for (const op of ops) {
    play(sim, op);
    sim.check();
  }
  sim.drain();
}

describe("the run state machine under random event orders", () => {
  it("never reaches an illegal state, never loses a pending id, and always comes to rest", () => {
    const seen = new Map<Path, number>();
    fc.assert(
      fc.property(setupArb, opsArb, (setup, ops) => live(setup, ops, { strictOrder: false, seen })),
      { numRuns: 500 },
    );
    // Every path the invariants are about was taken: a generator change that stops reaching one fails here.
    const paths: Path[] = [
      "park",
      "resume",
      "partial_answer",
      "answer_while_running",
      "custom_result",
      "self_hosted_result",
      "confirm_allow",
      "confirm_deny",
      "gate_deny",
      "server_tool",
      "rerun_after_crash",
      "indeterminate_after_crash",
      "dangling_request_closed",
      "rebased_answer",
      "interrupt_while_claimed",
      "interrupt_while_parked",
      "rejected_batch",
      "crash_budget_failure",
    ];
    expect(
      paths.filter((path) => !seen.has(path)),
      "paths never taken",
    ).toEqual([]);
    // 500 random runs are CPU-bound: ~20 s alone, past the suite's 30 s default when CI runs test
    // files side by side on two cores. The bound is on the machine, not on the property.
  }, 180_000);

  // Found by this model: a self-hosted `allow` once appended the call's `tool_result` entry at the end
  // of the pending list, so partial-answer idles listed ids out of call order.
  it("lists pending ids in call order in every requires_action idle, also after a self-hosted allow", () => {
    const seen = new Map<Path, number>();
    fc.assert(
      fc.property(setupArb, opsArb, (setup, ops) => live(setup, ops, { strictOrder: true, seen })),
      { numRuns: 150 },
    );
  });

  // Found by this model: the crash-budget stop once left a dead worker's model request open.
  it("a run that ends past its crash budget closes the model request a dead worker left open", async () => {
    const fx = await sessionWithQueuedRun();
    try {
      const { stores, clock, session, runId } = fx;
      let activation = (await stores.dispatch.claim("w0", LEASE_MS))!;
      // w0 starts a model request and dies in the middle of it.
      const start = spanStart({
        startId: newId("sevt", clock.now()),
        provider: "offline",
        model: "offline-test",
      });
      const version = await stores.history.threadVersion(session.threadId);
      const started = await stores.dispatch.commit({
        opId: `op_${runId}_v${version}`,
        runId,
        threadId: session.threadId,
        owner: "w0",
        epoch: activation.epoch,
        expectedVersion: version,
        facts: [encodeFact(start)],
      });
      expect(started.ok).toBe(true);
      // Every next owner dies before its first commit.
      for (let crash = 1; crash <= CRASH_BUDGET + 1; crash++) {
        clock.advance(LEASE_MS + 1);
        activation = (await stores.dispatch.claim(`w${crash}`, LEASE_MS))!;
      }
      expect(activation.crashCount).toBe(CRASH_BUDGET + 1);
      const outcome = await new TurnRunner(
        activation,
        {
          readThread: (threadId, afterSeq) => stores.history.readThread(threadId, afterSeq),
          commit: (op) => stores.dispatch.commit(op),
          publish: () => {},
          providers: {
            select: () => {
              throw new Error("a run past its crash budget must not call the model");
            },
            contextWindow: () => 200_000,
            describe: () => [],
          },
          sandboxes: new TieredSandboxProvider({}),
          clock,
          retry: DEFAULT_RETRY_POLICY,
          crashBudget: CRASH_BUDGET,
          modelIdleTimeoutMs: 60_000,
          log: { info: () => {}, warn: () => {} },
        },
        new AbortController().signal,
      ).run();
      expect(outcome).toBe("settled");
      const history = await stores.history.readThread(session.threadId, 0);
      expect(history.at(-1)?.body.stop_reason, "the run ended past its budget").toEqual({
        type: "retries_exhausted",
      });
      const ends = history.filter(
        (f) => f.type === "span.model_request_end" && f.body.model_request_start_id === start.id,
      );
      expect(ends, "the request the dead worker left open is ended with the run").toHaveLength(1);
      // The message stays unanswered (the turn failed); the next turn starts with the model, not a cleanup.
      expect(nextStep(history.map(decodeCommitted)).kind, "nothing dangles into the next turn").toBe(
        "call_model",
      );
    } finally {
      await fx.handle.close();
    }
  });
});
