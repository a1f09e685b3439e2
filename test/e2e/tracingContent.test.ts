import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlpReceiver.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { expectApiError, isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startSplitCluster } from "../support/splitCluster.js";
import { startWorker, type WorkerProcess } from "../support/workerProcess.js";

/**
 * Content in traces, end to end with a real OTLP receiver: the operator's ceiling
 * (AWAKEN_TRACE_CONTENT on the process that runs the turn), the session's request
 * (`awaken_capture_content: "telemetry"`) and its data subject's consent, read at each claim.
 */

const KEY = "sk-awaken-trace-content-key";
const TOKEN = "worker-token-trace-content-0123";
const CLIENT_SPAN_ID = "00f067aa0ba902b7";
/** An unsandboxed environment, so `bash` runs without bubblewrap. */
const NONE = { type: "cloud", sandbox: { tier: "none" } } as never;
const CAPTURE = { awaken_capture_content: "telemetry" };
const CONTENT_KEYS = [
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
];

let dataDir: string | null = null;
let receiver: OtlpReceiver | null = null;
let processes: Array<ServerProcess | WorkerProcess> = [];

afterEach(async () => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  processes = [];
  await receiver?.close();
  receiver = null;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = null;
});

/** A server exporting to a fresh receiver; `workers` in-process slots (0: runs go to a remote worker). */
async function start(options: { ceiling?: string; workers: number }) {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-trace-content-"));
  receiver = await startOtlpReceiver();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50" };
  const server = await startServerProcess({
    dataDir,
    apiKey: KEY,
    env: {
      AWAKEN_WORKER_TOKEN: TOKEN,
      ...otel,
      ...(options.ceiling ? { AWAKEN_TRACE_CONTENT: options.ceiling } : {}),
    },
    args: ["--workers", String(options.workers), "--lease-ms", "2000", "--allow-unsandboxed-tier"],
  });
  processes.push(server);
  return { server, otel, receiver };
}

async function setConsent(server: ServerProcess, subject: string, granted: boolean) {
  const response = await fetch(
    `${server.url}/v1/awaken/data_subjects/${subject}/consents/content_capture_telemetry`,
    {
      method: "PUT",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ granted }),
    },
  );
  expect(response.status).toBe(200);
}

async function session(client: Anthropic, metadata: Record<string, string>) {
  const environment = await client.beta.environments.create({ name: "content", config: NONE });
  const agent = await client.beta.agents.create({
    name: "content",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }] as never,
  });
  return client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, metadata });
}

let traces = 0;
/** Sends one turn under a trace of its own and waits for it to end; answers the trace id. */
async function turn(client: Anthropic, sessionId: string, text: string, turnNumber: number) {
  traces += 1;
  const traceId = `${String(traces).padStart(4, "0")}${"c".repeat(28)}`;
  await client.beta.sessions.events.send(
    sessionId,
    { events: [userMessage(text)] },
    { headers: { traceparent: `00-${traceId}-${CLIENT_SPAN_ID}-01` } },
  );
  await waitForHistory(client, sessionId, (h) => h.filter(isEndTurnIdle).length >= turnNumber, 20_000);
  return traceId;
}

/** The turn's spans once its run slice and `chats` model requests were exported. */
async function spansOf(r: OtlpReceiver, traceId: string, chats = 1): Promise<ReceivedSpan[]> {
  for (let i = 0; i < 300; i++) {
    const mine = r.spans.filter((s) => s.traceId === traceId);
    if (
      mine.some((s) => s.name === "run slice") &&
      mine.filter((s) => s.name === `chat ${MODEL}`).length >= chats
    )
      return mine;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`spans of ${traceId} never arrived: ${JSON.stringify(r.spans.map((s) => s.name))}`);
}

const contentOf = (span: ReceivedSpan | undefined) =>
  Object.fromEntries(
    CONTENT_KEYS.filter((k) => span && k in span.attributes).map((k) => [k, span?.attributes[k]]),
  );

describe("content in traces: ceiling on, in-process workers", () => {
  it("captured while the subject consents, not after the consent is withdrawn; never without the request", async () => {
    const { server, receiver: r } = await start({ ceiling: "on", workers: 1 });
    const client = server.client;
    await setConsent(server, "user-7", true);
    const asked = await session(client, { awaken_data_subject: "user-7", ...CAPTURE });

    // Consent granted: the chat spans carry the last user turn and the answer, the tool span its I/O.
    const first = await turn(client, asked.id, 'call bash {"command":"echo tool-output-7"}', 1);
    const spans = await spansOf(r, first, 2);
    const chats = spans.filter((s) => s.name === `chat ${MODEL}`);
    for (const chat of chats) {
      const input = JSON.parse(String(chat.attributes["gen_ai.input.messages"]));
      expect(input).toEqual([
        {
          role: "user",
          parts: [{ type: "text", content: 'call bash {"command":"echo tool-output-7"}' }],
        },
      ]);
      const output = JSON.parse(String(chat.attributes["gen_ai.output.messages"]));
      expect(output[0]).toMatchObject({ role: "assistant", parts: [{ type: "text" }] });
    }
    const answered = chats.find((c) =>
      String(c.attributes["gen_ai.output.messages"]).includes("[offline model]"),
    );
    expect(answered, JSON.stringify(chats.map((c) => c.attributes))).toBeDefined();
    const tool = spans.find((s) => s.name === "execute_tool bash");
    expect(JSON.parse(String(tool?.attributes["gen_ai.tool.call.arguments"]))).toEqual({
      command: "echo tool-output-7",
    });
    expect(String(tool?.attributes["gen_ai.tool.call.result"])).toContain("tool-output-7");

    // Withdrawn: the next turn's claim reads the consent again and captures nothing.
    await setConsent(server, "user-7", false);
    const second = await turn(client, asked.id, "after the withdrawal", 2);
    const later = await spansOf(r, second);
    for (const span of later) expect(contentOf(span), span.name).toEqual({});
    expect(r.bodies.join("\n")).not.toContain("after the withdrawal");

    // A session of the same (re-consented) subject that did not ask: nothing.
    await setConsent(server, "user-7", true);
    const unasked = await session(client, { awaken_data_subject: "user-7" });
    const third = await turn(client, unasked.id, "not asked for", 1);
    for (const span of await spansOf(r, third)) expect(contentOf(span), span.name).toEqual({});
    expect(r.bodies.join("\n")).not.toContain("not asked for");

    // A session that names no subject needs no consent.
    const anonymous = await session(client, CAPTURE);
    const fourth = await turn(client, anonymous.id, "no subject named", 1);
    const chat = (await spansOf(r, fourth)).find((s) => s.name === `chat ${MODEL}`);
    expect(String(chat?.attributes["gen_ai.input.messages"])).toContain("no subject named");

    // Nothing secret in anything exported.
    const exported = r.bodies.join("\n");
    for (const secret of [KEY, TOKEN]) expect(exported).not.toContain(secret);
  }, 90_000);

  it('the request takes only "telemetry": anything else is a 400 naming the allowed value', async () => {
    const { server } = await start({ ceiling: "on", workers: 1 });
    await expectApiError(
      session(server.client, { awaken_capture_content: "everything" }),
      Anthropic.BadRequestError,
      {
        status: 400,
        type: "invalid_request_error",
        message: ["awaken_capture_content", '"telemetry"'],
      },
    );
    const ok = await session(server.client, {});
    await expectApiError(
      server.client.beta.sessions.update(ok.id, { metadata: { awaken_capture_content: "yes" } }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: ['"telemetry"'] },
    );
  }, 60_000);
});

describe("content in traces: the ceiling", () => {
  it("off (the default): nothing is captured, whatever the request and the consent", async () => {
    const { server, receiver: r } = await start({ workers: 1 });
    await setConsent(server, "user-8", true);
    const asked = await session(server.client, { awaken_data_subject: "user-8", ...CAPTURE });
    const traceId = await turn(server.client, asked.id, "ceiling is off", 1);
    for (const span of await spansOf(r, traceId)) expect(contentOf(span), span.name).toEqual({});
    expect(r.bodies.join("\n")).not.toContain("ceiling is off");
  }, 60_000);

  it("is the executing process's: a remote worker with it on captures what its claim allows", async () => {
    // The coordinator's own ceiling is off and it runs nothing: the decision crosses the wire.
    const { server, otel, receiver: r } = await start({ ceiling: "off", workers: 0 });
    const worker = await startWorker(server.url, TOKEN, { ...otel, AWAKEN_TRACE_CONTENT: "on" }, [
      "--allow-unsandboxed-tier",
    ]);
    processes.push(worker);
    await setConsent(server, "user-9", true);
    const asked = await session(server.client, { awaken_data_subject: "user-9", ...CAPTURE });
    const first = await turn(server.client, asked.id, "remote capture", 1);
    const chat = (await spansOf(r, first)).find((s) => s.name === `chat ${MODEL}`);
    expect(chat?.service).toBe("awaken-worker");
    expect(String(chat?.attributes["gen_ai.input.messages"])).toContain("remote capture");

    await setConsent(server, "user-9", false);
    const second = await turn(server.client, asked.id, "remote withdrawn", 2);
    for (const span of await spansOf(r, second)) expect(contentOf(span), span.name).toEqual({});
  }, 60_000);

  it("any value other than on or off stops start-up, naming the variable", async () => {
    await expect(start({ ceiling: "yes", workers: 1 })).rejects.toThrow(/AWAKEN_TRACE_CONTENT[^\n]*"yes"/);
  }, 30_000);
});

describe.skipIf(postgresUnavailable() !== null)("content in traces on the split deployment", () => {
  it("the coordinator asks Control for the consent at each claim; a withdrawal stops the capture", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "awaken-trace-content-split-"));
    receiver = await startOtlpReceiver();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50" };
    const cluster = await startSplitCluster({
      dataDir,
      apiKey: KEY,
      workerToken: TOKEN,
      // The coordinator keeps the client's trace with the input; its own ceiling stays off.
      env: otel,
      coordinatorArgs: ["--workers", "0", "--allow-unsandboxed-tier"],
    });
    try {
      const coordinator = cluster.coordinator!;
      const worker = await startWorker(coordinator.url, TOKEN, { ...otel, AWAKEN_TRACE_CONTENT: "on" }, [
        "--allow-unsandboxed-tier",
      ]);
      processes.push(worker);
      // Consent is Control's: set through the coordinator, which forwards it.
      await setConsent(coordinator, "user-10", true);
      const asked = await session(coordinator.client, { awaken_data_subject: "user-10", ...CAPTURE });
      const first = await turn(coordinator.client, asked.id, "split capture", 1);
      const chat = (await spansOf(receiver, first)).find((s) => s.name === `chat ${MODEL}`);
      expect(String(chat?.attributes["gen_ai.input.messages"])).toContain("split capture");

      await setConsent(coordinator, "user-10", false);
      const second = await turn(coordinator.client, asked.id, "split withdrawn", 2);
      for (const span of await spansOf(receiver, second)) expect(contentOf(span), span.name).toEqual({});
    } finally {
      await cluster.dispose();
    }
  }, 90_000);
});
