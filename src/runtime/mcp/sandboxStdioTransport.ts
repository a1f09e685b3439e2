/**
 * The MCP stdio transport over a process the session's sandbox started. The SDK's own
 * `StdioClientTransport` spawns its command on the host itself, which would bypass the sandbox;
 * this one speaks the same framing (newline-delimited JSON-RPC, the SDK's `ReadBuffer`) over the
 * pipes of a process it is handed.
 */

import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { SandboxProcess } from "../../sandbox/ports.js";

export class SandboxStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(private readonly process: SandboxProcess) {}

  async start(): Promise<void> {
    this.process.stdout.on("data", (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (error) {
        // A line past the SDK's bound (10 MiB): the server is not speaking MCP; it is stopped.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        void this.close();
        return;
      }
      this.drain();
    });
    this.process.stdout.on("error", (error: Error) => this.onerror?.(error));
    this.process.stdin.on("error", (error: Error) => this.onerror?.(error));
    void this.process.exited.then(() => this.finish());
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the MCP server process has exited"));
    return new Promise((resolve, reject) => {
      this.process.stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    await this.process.kill();
    this.finish();
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC: reported, and the stream goes on (as the SDK's own does).
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
