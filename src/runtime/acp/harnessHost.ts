/**
 * The harnesses alive on this worker, one per session thread. A harness outlives the run that
 * launched it only while it waits for a person's decision on a permission it asked for (the run
 * parked) or between turns: the run that resumes the thread on this worker finds it here and goes
 * on where it stopped. A lost claim kills it; one nobody resumes is stopped after an idle limit.
 */

import type {
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from "@agentclientprotocol/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AcpRuntimeDefinition } from "../../brains/ports.js";
import type { HarnessConnection } from "./harnessConnection.js";
import type { HarnessToolServer } from "./harnessToolServer.js";

/** A permission the harness waits on while its run is parked: answered by the run that resumes it. */
export interface PendingPermission {
  /** The committed tool call the ask is recorded under. */
  readonly callId: string;
  readonly request: RequestPermissionRequest;
  answer(response: RequestPermissionResponse): void;
}

/** A call of the agent's own tools the harness waits on: answered from its committed result. */
export interface PendingToolCall {
  /** The committed tool call (custom or MCP) the harness's call became. */
  readonly callId: string;
  answer(result: CallToolResult): void;
}

export interface LiveHarness {
  readonly runtime: AcpRuntimeDefinition;
  readonly connection: HarnessConnection;
  readonly acpSessionId: string;
  /** The prompt in flight; a run parked on a permission leaves it open for the next one. */
  prompt: Promise<PromptResponse> | null;
  /** The thread position the prompt was sent at: an interrupt committed after it makes it stale. */
  promptSeq: number;
  permission: PendingPermission | null;
  /** The agent's own tools, offered to the harness over MCP (null: it has none to offer). */
  readonly tools: HarnessToolServer | null;
  toolCall: PendingToolCall | null;
  /**
   * The harness's own reports of calls to those tools (its `tool_call` for `mcp__awaken__…`): the
   * call is committed once, as the tool server received it, never again as a harness call.
   */
  readonly folded: Set<string>;
  /** The harness's tool call ids already committed, to their call ids (a resumed run goes on with them). */
  readonly calls: Map<string, string>;
  lastUsed: number;
}

/** A harness left idle (between turns, or parked on an ask nobody answers) this long is stopped. */
export const HARNESS_IDLE_MS = 15 * 60_000;

export class HarnessHost {
  private readonly live = new Map<string, LiveHarness>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly idleMs = HARNESS_IDLE_MS) {
    this.sweep = setInterval(() => void this.stopIdle(), Math.min(idleMs, 60_000));
    this.sweep.unref();
  }

  /** The thread's live harness, if its process is still running. */
  get(key: string): LiveHarness | null {
    const harness = this.live.get(key);
    if (!harness) return null;
    if (harness.connection.exited) {
      this.live.delete(key);
      return null;
    }
    harness.lastUsed = Date.now();
    return harness;
  }

  add(key: string, harness: LiveHarness): void {
    this.live.set(key, harness);
  }

  /** Stops the thread's harness (lost claim, failed turn): it dies with the claim. */
  async stop(key: string): Promise<void> {
    const harness = this.live.get(key);
    this.live.delete(key);
    await harness?.connection.close();
    await harness?.tools?.close();
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    const all = [...this.live.values()];
    this.live.clear();
    await Promise.allSettled(all.flatMap((h) => [h.connection.close(), h.tools?.close()]));
  }

  private async stopIdle(): Promise<void> {
    const now = Date.now();
    for (const [key, harness] of this.live) {
      if (harness.connection.listener === null && now - harness.lastUsed > this.idleMs) await this.stop(key);
    }
  }
}
