/**
 * The A2A delegate's connection to its remote agent, made with the official `@a2a-js/sdk` client
 * over JSON-RPC. Every request (the card, then the interface it names) goes through the outbound
 * connector, so the address policy that guards MCP connections guards this one too. The pinned
 * bearer travels only to the card's own origin: a card naming an interface elsewhere never gets it.
 */

import { type Message, type Part, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { PlatformError } from "../../kernel/errors.js";
import type { OutboundFetch } from "../../kernel/outboundConnector.js";
import type { OutgoingPart } from "./delegateFacts.js";

const CARD_TIMEOUT_MS = 30_000;

/** States in which a remote task waits (for input) or is over: the delegate call ends there. */
const RESTING = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);
const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export const isRestingState = (state: TaskState): boolean => RESTING.has(state);
export const isResting = (task: Task): boolean =>
  RESTING.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
export const isTerminal = (task: Task): boolean =>
  TERMINAL.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
export const stateName = (task: Task): string =>
  (TaskState[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED] ?? "UNKNOWN")
    .replace("TASK_STATE_", "")
    .toLowerCase()
    .replace("_", "-");

/** The remote answered a request with a status no retry can change (401, 403, a missing card). */
export class A2aHttpRefusal extends PlatformError {
  constructor(
    readonly status: number,
    readonly card: boolean,
  ) {
    super("a2a_http_refused", `HTTP ${status}`);
    this.name = "A2aHttpRefusal";
  }
}

export interface OutgoingMessage {
  messageId: string;
  parts: OutgoingPart[];
  taskId: string;
  contextId: string;
}

export class A2aRemote {
  private constructor(private readonly client: Client) {}

  /** Reads the card and picks its JSON-RPC interface. `authorization` is the header, or null. */
  static async connect(
    cardUrl: string,
    authorization: string | null,
    fetchVia: OutboundFetch,
  ): Promise<A2aRemote> {
    const origin = new URL(cardUrl).origin;
    const fetchImpl: typeof fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
      if (authorization !== null && url.origin === origin) headers.set("authorization", authorization);
      // Calls carry their own signal; the card read (which takes none) gets a bound of its own.
      const signal = init?.signal ?? AbortSignal.timeout(CARD_TIMEOUT_MS);
      const response = await fetchVia(url, { ...init, headers, signal });
      // Retrying cannot fix these: refused credentials, or no agent card at that URL.
      if (
        response.status === 401 ||
        response.status === 403 ||
        (url.href === cardUrl && response.status === 404)
      ) {
        await response.body?.cancel();
        throw new A2aHttpRefusal(response.status, url.href === cardUrl);
      }
      return response;
    };
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    });
    return new A2aRemote(await factory.createFromUrl(cardUrl, ""));
  }

  send(message: OutgoingMessage, signal: AbortSignal): AsyncGenerator<StreamResponse, void, undefined> {
    const wire: Message = {
      role: Role.ROLE_USER,
      messageId: message.messageId,
      parts: message.parts.map(wirePart),
      contextId: message.contextId,
      taskId: message.taskId,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    return this.client.sendMessageStream(
      { tenant: "", message: wire, configuration: undefined, metadata: undefined },
      { signal },
    );
  }

  resubscribe(taskId: string, signal: AbortSignal): AsyncGenerator<StreamResponse, void, undefined> {
    return this.client.resubscribeTask({ tenant: "", id: taskId }, { signal });
  }

  getTask(taskId: string, signal: AbortSignal): Promise<Task> {
    return this.client.getTask({ tenant: "", id: taskId, historyLength: undefined }, { signal });
  }

  cancel(taskId: string, signal: AbortSignal): Promise<Task> {
    return this.client.cancelTask({ tenant: "", id: taskId, metadata: undefined }, { signal });
  }
}

function wirePart(part: OutgoingPart): Part {
  return part.kind === "text"
    ? {
        content: { $case: "text", value: part.text },
        mediaType: "text/plain",
        filename: "",
        metadata: undefined,
      }
    : {
        content: { $case: "data", value: part.value },
        mediaType: "application/json",
        filename: "",
        metadata: undefined,
      };
}

/** The text of parts (data parts as JSON), as our history keeps it. */
export function partsText(parts: readonly Part[] | undefined): string {
  return (parts ?? [])
    .map((part) => {
      const content = part.content;
      if (content?.$case === "text") return content.value;
      if (content?.$case === "data") return JSON.stringify(content.value ?? null);
      return "";
    })
    .filter((text) => text !== "")
    .join("\n");
}
