/**
 * `awaken acp` as an editor runs it: the built CLI as a child process, driven over its stdio by the
 * ACP SDK's own client side. Every byte it writes to stdout and stderr is kept, so tests can check
 * that stdout carries only protocol messages and that no secret appears anywhere.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  type ClientConnection,
  client,
  methods,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";

const MAIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface AcpAgentProcess {
  child: ChildProcessWithoutNullStreams;
  /** The SDK client connected to the process (null for a raw process). */
  connection: ClientConnection | null;
  /** Every `session/update` received, in order. */
  updates: SessionNotification[];
  /** Every permission question received, in order. */
  asked: RequestPermissionRequest[];
  /** How the next permission question is answered (set per test). */
  answer: (request: RequestPermissionRequest) => Promise<RequestPermissionResponse>;
  stdout(): string;
  stderr(): string;
  /** Ends the process (SIGKILL when it does not end on stdin's close) and waits for its exit. */
  stop(): Promise<void>;
}

/** Starts `node dist/cli/main.js acp …args` with only PATH and `env`; `raw` skips the SDK client. */
export function startAcpAgent(
  args: string[],
  env: Record<string, string>,
  options: { raw?: boolean } = {},
): AcpAgentProcess {
  const child = spawn(process.execPath, [MAIN, "acp", ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  const updates: SessionNotification[] = [];
  const asked: RequestPermissionRequest[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const handle: AcpAgentProcess = {
    child,
    connection: null,
    updates,
    asked,
    answer: async () => ({ outcome: { outcome: "cancelled" } }),
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
  if (options.raw) {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    return handle;
  }
  const [forClient, forCheck] = (Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>).tee();
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of forCheck) out += decoder.decode(chunk, { stream: true });
  })();
  handle.connection = client({ name: "acp-test-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      asked.push(params);
      return handle.answer(params);
    })
    .connect(ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, forClient));
  return handle;
}

/** The text of the updates of one kind for a session, joined. */
export function chunkText(updates: SessionNotification[], sessionId: string, kind: string): string {
  return updates
    .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind)
    .map((n) => {
      const update = n.update as { content?: { type: string; text?: string } };
      return update.content?.type === "text" ? (update.content.text ?? "") : "";
    })
    .join("");
}
