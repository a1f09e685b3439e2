/**
 * One harness process and its ACP connection: the harness started inside the session's sandbox,
 * spoken to over its stdin/stdout. The client side of the protocol is answered here: file system
 * and terminal requests by the sandbox-confined services, permission requests and session updates
 * by whichever run is following the harness right now (its listener). Nothing here commits.
 */

import { Readable, Writable } from "node:stream";
import {
  type ClientConnection,
  type CreateTerminalRequest,
  type CreateTerminalResponse,
  client,
  type KillTerminalRequest,
  type KillTerminalResponse,
  methods,
  ndJsonStream,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type ReleaseTerminalRequest,
  type ReleaseTerminalResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type TerminalOutputRequest,
  type TerminalOutputResponse,
  type WaitForTerminalExitRequest,
  type WaitForTerminalExitResponse,
  type WriteTextFileRequest,
  type WriteTextFileResponse,
} from "@agentclientprotocol/sdk";
import type { SandboxProcess } from "../../sandbox/ports.js";

/** The harness's file system and terminal requests, served inside the sandbox's workspace only. */
export interface HarnessClientServices {
  readTextFile(p: ReadTextFileRequest): Promise<ReadTextFileResponse>;
  writeTextFile(p: WriteTextFileRequest): Promise<WriteTextFileResponse>;
  createTerminal(p: CreateTerminalRequest): Promise<CreateTerminalResponse>;
  terminalOutput(p: TerminalOutputRequest): Promise<TerminalOutputResponse>;
  waitForTerminalExit(p: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse>;
  killTerminal(p: KillTerminalRequest): Promise<KillTerminalResponse>;
  releaseTerminal(p: ReleaseTerminalRequest): Promise<ReleaseTerminalResponse>;
  /** Kills every terminal still running. */
  close(): Promise<void>;
}

/** What a following run hears from the harness. */
export interface HarnessListener {
  update(notification: SessionNotification): void;
  /** A permission request: answered by the gate, or parked until a person decides. */
  permission(request: RequestPermissionRequest): Promise<RequestPermissionResponse>;
}

export class HarnessConnection {
  /** The run following the harness; null between runs (updates are then dropped, asks refused). */
  listener: HarnessListener | null = null;
  readonly connection: ClientConnection;

  constructor(
    readonly process: SandboxProcess,
    private readonly services: HarnessClientServices,
    /** Called once the connection is closed (the launch's own abort, which the spawn listens to). */
    private readonly onClose: () => void = () => undefined,
  ) {
    const app = client({})
      .onNotification(methods.client.session.update, ({ params }) => {
        this.listener?.update(params);
      })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => {
        const listener = this.listener;
        // Nobody follows the harness: nothing may run without a run's claim behind it.
        if (!listener) return { outcome: { outcome: "cancelled" } };
        return listener.permission(params);
      })
      .onRequest(methods.client.fs.readTextFile, ({ params }) => this.services.readTextFile(params))
      .onRequest(methods.client.fs.writeTextFile, ({ params }) => this.services.writeTextFile(params))
      .onRequest(methods.client.terminal.create, ({ params }) => this.services.createTerminal(params))
      .onRequest(methods.client.terminal.output, ({ params }) => this.services.terminalOutput(params))
      .onRequest(methods.client.terminal.waitForExit, ({ params }) =>
        this.services.waitForTerminalExit(params),
      )
      .onRequest(methods.client.terminal.kill, ({ params }) => this.services.killTerminal(params))
      .onRequest(methods.client.terminal.release, ({ params }) => this.services.releaseTerminal(params));
    void process.exited.then(() => {
      this.exited = true;
    });
    this.connection = app.connect(
      ndJsonStream(
        Writable.toWeb(process.stdin) as WritableStream<Uint8Array>,
        Readable.toWeb(process.stdout) as ReadableStream<Uint8Array>,
      ),
    );
  }

  /** Set once the process has exited (crashed, killed or done). */
  exited = false;

  get agent() {
    return this.connection.agent;
  }

  /** Kills the harness and everything it started (terminals included). */
  async close(): Promise<void> {
    this.listener = null;
    this.connection.close();
    await Promise.allSettled([this.services.close(), this.process.kill()]);
    this.onClose();
  }
}
