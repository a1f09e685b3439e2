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

/** How many updates are kept for the next run while none follows the harness. */
const MAX_HELD_UPDATES = 1_000;

export class HarnessConnection {
  private following: HarnessListener | null = null;
  /**
   * What the harness said while no run followed it (it goes on beside a call a parked run waits
   * on), for the next run: updates, the oldest dropped past a bound, and permission requests,
   * decided only under a run's claim.
   */
  private readonly heldUpdates: SessionNotification[] = [];
  private readonly heldAsks: Array<{
    request: RequestPermissionRequest;
    answer(response: RequestPermissionResponse): void;
  }> = [];
  readonly connection: ClientConnection;

  /** The run following the harness; null between runs. */
  get listener(): HarnessListener | null {
    return this.following;
  }

  /** A run taking the harness hears first what it said meanwhile. */
  set listener(listener: HarnessListener | null) {
    this.following = listener;
    if (!listener) return;
    for (const update of this.heldUpdates.splice(0)) listener.update(update);
    for (const ask of this.heldAsks.splice(0)) void listener.permission(ask.request).then(ask.answer);
  }

  constructor(
    readonly process: SandboxProcess,
    private readonly services: HarnessClientServices,
    /** Called once the connection is closed (the launch's own abort, which the spawn listens to). */
    private readonly onClose: () => void = () => undefined,
  ) {
    const app = client({})
      .onNotification(methods.client.session.update, ({ params }) => {
        if (this.following) this.following.update(params);
        else if (this.heldUpdates.push(params) > MAX_HELD_UPDATES) this.heldUpdates.shift();
      })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => {
        if (this.following) return this.following.permission(params);
        // Nobody follows the harness: nothing may run without a run's claim behind it, so the ask
        // waits for the next run (or is cancelled when the harness stops).
        return new Promise<RequestPermissionResponse>((answer) =>
          this.heldAsks.push({ request: params, answer }),
        );
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

  /**
   * Forgets what was held for a prompt that is over (a new one starts, or it was cancelled): its
   * late updates are no part of the next prompt's answer, and its asks are cancelled.
   */
  forgetHeld(): void {
    this.heldUpdates.length = 0;
    for (const ask of this.heldAsks.splice(0)) ask.answer({ outcome: { outcome: "cancelled" } });
  }

  /** Set once the process has exited (crashed, killed or done). */
  exited = false;

  get agent() {
    return this.connection.agent;
  }

  /** Kills the harness and everything it started (terminals included). */
  async close(): Promise<void> {
    this.following = null;
    this.forgetHeld();
    this.connection.close();
    await Promise.allSettled([this.services.close(), this.process.kill()]);
    this.onClose();
  }
}
