import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Role } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectMcp } from "../support/mcpClient.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlpReceiver.js";
import { isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

const KEY = "sk-awaken-tracing-test-key";
const TOKEN = "worker-token-tracing-0123456789";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01`;
/** An unsandboxed environment, so the remote worker runs `bash` without bubblewrap. */
const NONE = { type: "cloud", sandbox: { tier: "none" } } as never;
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

let dataDir: string;
let receiver: OtlpReceiver;
let server: ServerProcess;
let worker: WorkerProcess;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-tracing-"));
  receiver = await startOtlpReceiver();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50" };
  // No in-process workers: every run slice below runs in the remote worker process.
  server = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: { AWAKEN_WORKER_TOKEN: TOKEN, ...otel },
    args: ["--workers", "0", "--lease-ms", "2000", "--allow-unsandboxed-tier"],
  });
  worker = await startWorker(server.url, TOKEN, otel, ["--allow-unsandboxed-tier"]);
});

afterEach(async () => {
  for (const p of [worker, server]) if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function bashSession(client: Anthropic) {
  const environment = await client.beta.environments.create({ name: "traced", config: NONE });
  const agent = await client.beta.agents.create({
    name: "traced",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }] as never,
  });
  return client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
}

/** Polls the receiver until `ready` holds for the spans received so far. */
async function spansUntil(ready: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  for (let i = 0; i < 300; i++) {
    if (ready(receiver.spans)) return receiver.spans;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`spans never arrived: ${JSON.stringify(receiver.spans.map((s) => [s.service, s.name]))}`);
}

const jsonLines = (text: string) =>
  text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("OpenTelemetry traces across a remote worker", () => {
  it("one trace from the client's traceparent through the edge, the worker's claim, model requests and the tool call", async () => {
    const client = server.client;
    const session = await bashSession(client);
    await client.beta.sessions.events.send(
      session.id,
      { events: [userMessage('call bash {"command":"echo traced"}')] },
      { headers: { traceparent: TRACEPARENT, tracestate: "vendor=abc" } },
    );
    const events = await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 20_000);
    expect(textOf(events.filter((e) => e.type === "agent.tool_result").at(-1))).toContain("traced");

    const spans = await spansUntil(
      (all) =>
        all.some((s) => s.name === "run slice" && s.traceId === TRACE_ID) &&
        all.filter((s) => s.name.startsWith("chat ") && s.traceId === TRACE_ID).length >= 2,
    );
    const traced = spans.filter((s) => s.traceId === TRACE_ID);

    // The edge: a server span named by route pattern, child of the client's span, in the server's process.
    const edge = traced.find((s) => s.kind === SERVER && s.parentSpanId === CLIENT_SPAN_ID);
    expect(edge).toMatchObject({
      service: "awaken",
      name: "POST /v1/sessions/:id/events",
      attributes: { "http.route": "/v1/sessions/:id/events", "http.request.method": "POST" },
    });
    expect(edge?.attributes["http.response.status_code"]).toBe(200);

    // The claim: exported by the worker process, child of the edge span (through the stored run).
    const slice = traced.find((s) => s.name === "run slice");
    expect(slice).toMatchObject({ service: "awaken-worker", kind: CONSUMER, parentSpanId: edge?.spanId });
    expect(slice?.attributes["awaken.session.id"]).toBe(session.id);

    // Each model request: a GenAI client span under the claim.
    const chats = traced.filter((s) => s.name === `chat ${MODEL}`);
    expect(chats.length).toBeGreaterThanOrEqual(2);
    for (const chat of chats) {
      expect(chat).toMatchObject({ service: "awaken-worker", kind: CLIENT, parentSpanId: slice?.spanId });
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "offline",
        "gen_ai.request.model": MODEL,
      });
      expect(typeof chat.attributes["gen_ai.usage.input_tokens"]).toBe("number");
      expect(typeof chat.attributes["gen_ai.usage.output_tokens"]).toBe("number");
    }

    // The tool call: under the claim, with its name and outcome.
    const tool = traced.find((s) => s.name === "execute_tool bash");
    expect(tool).toMatchObject({ service: "awaken-worker", parentSpanId: slice?.spanId });
    expect(tool?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "bash",
      "awaken.tool.outcome": "ok",
    });

    // The worker transport continues the trace back into the coordinator (its commits).
    const transport = traced.filter(
      (s) => s.service === "awaken" && s.name.startsWith("POST /v1/awaken/worker/"),
    );
    expect(transport.some((s) => s.name === "POST /v1/awaken/worker/commit")).toBe(true);
    const workerSpanIds = new Set(traced.filter((s) => s.service === "awaken-worker").map((s) => s.spanId));
    for (const s of transport) expect(workerSpanIds.has(s.parentSpanId)).toBe(true);

    // Nothing secret, and no command text, in anything exported.
    const exported = receiver.bodies.join("\n");
    for (const secret of [KEY, TOKEN, "echo traced"]) expect(exported).not.toContain(secret);
    expect(exported).not.toMatch(/authorization/i);

    // The worker's JSON log line of the slice carries the slice's trace and span ids.
    const ended = jsonLines(worker.stderr()).find((l) => l.msg === "run slice ended");
    expect(ended).toMatchObject({ trace_id: TRACE_ID, span_id: slice?.spanId });
  }, 60_000);

  it("a malformed traceparent is ignored: the turn works and starts a new trace", async () => {
    const client = server.client;
    const session = await bashSession(client);
    const malformed = `00-${TRACE_ID.toUpperCase()}-${CLIENT_SPAN_ID}-01`;
    await client.beta.sessions.events.send(
      session.id,
      { events: [userMessage("hello")] },
      { headers: { traceparent: malformed } },
    );
    await waitForHistory(client, session.id, (h) => h.some(isEndTurnIdle), 20_000);
    const spans = await spansUntil((all) =>
      all.some((s) => s.name === "run slice" && s.attributes["awaken.session.id"] === session.id),
    );
    const slice = spans.find(
      (s) => s.name === "run slice" && s.attributes["awaken.session.id"] === session.id,
    );
    expect(slice?.traceId).not.toBe(TRACE_ID);
    expect(slice?.traceId.toLowerCase()).not.toBe(TRACE_ID);
    const edge = spans.find((s) => s.spanId === slice?.parentSpanId);
    expect(edge).toMatchObject({ service: "awaken", kind: SERVER, parentSpanId: "" });
    expect(spans.some((s) => s.traceId === TRACE_ID)).toBe(false);
  }, 60_000);

  it("the A2A and MCP edges continue the client's trace into the run the same way", async () => {
    const client = server.client;
    const agent = await client.beta.agents.create({ name: "traced peer", model: MODEL });
    const a2aTrace = "a2a0000000000000000000000000a2a0";
    const mcpTrace = "3c90000000000000000000000000c3c0";
    const traced =
      (traceId: string): typeof fetch =>
      (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set("authorization", `Bearer ${KEY}`);
        headers.set("traceparent", `00-${traceId}-${CLIENT_SPAN_ID}-01`);
        return fetch(input, { ...init, headers });
      };
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl: traced(a2aTrace) })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: traced(a2aTrace) }),
    });
    const peer = await factory.createFromUrl(`${server.url}/v1/a2a/agents/${agent.id}/`);
    const task = await peer.sendMessage({
      tenant: "",
      message: {
        role: Role.ROLE_USER,
        messageId: "traced-a2a-1",
        parts: [
          { content: { $case: "text", value: "hello" }, mediaType: "", filename: "", metadata: undefined },
        ],
        contextId: "",
        taskId: "",
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    });
    expect("status" in task).toBe(true);

    const mcp = await connectMcp(server.url, {
      apiKey: KEY,
      headers: { traceparent: `00-${mcpTrace}-${CLIENT_SPAN_ID}-01` },
    });
    try {
      const { tools } = await mcp.client.listTools();
      const tool = tools.find((x) => x.name.endsWith(`_${agent.id.replace(/^agent_/, "")}`));
      const result = await mcp.client.callTool({ name: tool?.name ?? "", arguments: { message: "hello" } });
      expect(result.isError).toBeFalsy();
    } finally {
      await mcp.close();
    }

    // The edge's span comes from the server's exporter, the slice's from the worker's: wait for both
    // (the slice's parent), or the slice can be checked before its edge arrived.
    const spans = await spansUntil((all) =>
      [a2aTrace, mcpTrace].every((id) => {
        const slice = all.find((s) => s.name === "run slice" && s.traceId === id);
        return slice !== undefined && all.some((s) => s.spanId === slice.parentSpanId);
      }),
    );
    for (const [traceId, route] of [
      [a2aTrace, "POST /v1/a2a/agents/:agentId"],
      [mcpTrace, "POST /v1/mcp"],
    ] as const) {
      const slice = spans.find((s) => s.name === "run slice" && s.traceId === traceId);
      const edge = spans.find((s) => s.spanId === slice?.parentSpanId);
      // The run continues the span of the request that entered its input, whichever protocol carried it.
      expect(edge, traceId).toMatchObject({
        service: "awaken",
        kind: SERVER,
        name: route,
        parentSpanId: CLIENT_SPAN_ID,
      });
      expect(slice?.service).toBe("awaken-worker");
      expect(spans.some((s) => s.traceId === traceId && s.name === `chat ${MODEL}`)).toBe(true);
    }
  }, 60_000);
});
