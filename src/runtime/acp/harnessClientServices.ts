/**
 * The client side of ACP that an ACP Brain's harness calls back into: its file reads and writes
 * and its terminals, all served inside the session's sandbox and confined to its workspace
 * (harnessFiles.ts, harnessTerminals.ts). Every refusal is a JSON-RPC error (`RequestError`) with
 * a message the harness can act on; none names a host path.
 */
import type {
  CreateTerminalRequest,
  CreateTerminalResponse,
  KillTerminalRequest,
  KillTerminalResponse,
  ReadTextFileRequest,
  ReadTextFileResponse,
  ReleaseTerminalRequest,
  ReleaseTerminalResponse,
  TerminalOutputRequest,
  TerminalOutputResponse,
  WaitForTerminalExitRequest,
  WaitForTerminalExitResponse,
  WriteTextFileRequest,
  WriteTextFileResponse,
} from "@agentclientprotocol/sdk";
import type { Sandbox } from "../../sandbox/ports.js";
import { readTextFile, writeTextFile } from "./harnessFiles.js";
import { HarnessTerminals } from "./harnessTerminals.js";

/** What one read returns and one write takes at most. */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
/** What a terminal keeps of its output at most, whatever `outputByteLimit` asks. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Terminals not yet released, per session. */
export const DEFAULT_MAX_TERMINALS = 8;

export interface HarnessClientServicesOptions {
  /** Aborting kills every terminal and ends every sandbox command (lost claim, shutdown). */
  signal: AbortSignal;
  maxFileBytes?: number;
  maxOutputBytes?: number;
  maxTerminals?: number;
}

export class HarnessClientServices {
  private readonly terminals: HarnessTerminals;
  private readonly maxFileBytes: number;
  private readonly signal: AbortSignal;

  constructor(
    private readonly sandbox: Sandbox,
    options: HarnessClientServicesOptions,
  ) {
    this.signal = options.signal;
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.terminals = new HarnessTerminals(sandbox, {
      signal: options.signal,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      maxTerminals: options.maxTerminals ?? DEFAULT_MAX_TERMINALS,
    });
    if (options.signal.aborted) void this.close();
    else options.signal.addEventListener("abort", () => void this.close(), { once: true });
  }

  readTextFile(params: ReadTextFileRequest): Promise<ReadTextFileResponse> {
    return readTextFile(this.sandbox, params, this.maxFileBytes, this.signal);
  }

  writeTextFile(params: WriteTextFileRequest): Promise<WriteTextFileResponse> {
    return writeTextFile(this.sandbox, params, this.maxFileBytes, this.signal);
  }

  createTerminal(params: CreateTerminalRequest): Promise<CreateTerminalResponse> {
    return this.terminals.create(params);
  }

  async terminalOutput(params: TerminalOutputRequest): Promise<TerminalOutputResponse> {
    return this.terminals.output(params.terminalId);
  }

  /** `signal`: the request's own (the harness cancelled it), which stops the wait, not the command. */
  async waitForTerminalExit(
    params: WaitForTerminalExitRequest,
    signal?: AbortSignal,
  ): Promise<WaitForTerminalExitResponse> {
    const status = await this.terminals.waitForExit(params.terminalId, signal);
    return { exitCode: status.exitCode ?? null, signal: status.signal ?? null };
  }

  async killTerminal(params: KillTerminalRequest): Promise<KillTerminalResponse> {
    await this.terminals.kill(params.terminalId);
    return {};
  }

  async releaseTerminal(params: ReleaseTerminalRequest): Promise<ReleaseTerminalResponse> {
    await this.terminals.release(params.terminalId);
    return {};
  }

  /** Kills every terminal (and everything each started); later terminal requests are refused. */
  close(): Promise<void> {
    return this.terminals.close();
  }
}
