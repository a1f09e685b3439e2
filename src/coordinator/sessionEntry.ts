import type { JsonObject } from "../kernel/json.js";
import type { SessionResourceRequest } from "../resources/ports.js";
import type { DomainInput } from "./domainInputs.js";
import type { ExecutableAgentSnapshot, KeyedSpace, SessionRecord } from "./ports.js";

/** The agent a new session runs: a registered agent, an exact version or the latest, optionally overridden. */
export interface AgentRef {
  id: string;
  version?: number;
  /** Definition fields this session alone runs with (the Managed wire's `agent_with_overrides`). */
  overrides?: JsonObject;
}

/** Resolves an agent reference to the exact snapshot a session pins (Control implements it). */
export interface AgentPinner {
  pin(workspaceId: string, ref: AgentRef): Promise<ExecutableAgentSnapshot>;
}

export interface StartSessionCommand {
  workspaceId: string;
  agent: AgentRef;
  /** Absent: the workspace's default environment, made on first use. */
  environmentId?: string;
  title?: string | null;
  metadata?: Record<string, string>;
  resources?: SessionResourceRequest[];
  vaultIds?: string[];
  budget?: unknown | null;
  initialInputs?: DomainInput[];
  /** The user profile (Control's, checked live by the edge) the session is attributed to; absent: none. */
  userProfileId?: string | null;
}

/**
 * How every edge opens a session: pin the agent exactly, pick the environment, create the session.
 * Named sessions serve the UI protocols, whose clients choose the conversation id (an AI SDK chat
 * id, an AG-UI thread id): the first use of a name creates the session, and the name names it from
 * then on. A session id always names its own session.
 */
export interface SessionEntry {
  start(cmd: StartSessionCommand): Promise<SessionRecord>;
  /** The session `name` names in the workspace (a session id or a bound name), or null. */
  findNamed(workspaceId: string, name: string): Promise<SessionRecord | null>;
  /**
   * The session `name` names, or a new one started with `cmd` and bound to `name`. Concurrent
   * first uses of one name create one session.
   */
  openNamed(
    workspaceId: string,
    name: string,
    cmd: Omit<StartSessionCommand, "workspaceId">,
  ): Promise<SessionRecord>;
  /**
   * The session a protocol key (e.g. an A2A message id that opened a context) made within
   * `windowMs`, or a new one started with `cmd` and bound to it: a retried request reaches the
   * session its first attempt made. Keys live in their own space, apart from client session names.
   */
  openKeyed(
    workspaceId: string,
    space: KeyedSpace,
    key: string,
    windowMs: number,
    cmd: Omit<StartSessionCommand, "workspaceId">,
  ): Promise<SessionRecord>;
  /** The client names bound to a session (its AI SDK chat id, AG-UI thread id); usually one or none. */
  namesOf(workspaceId: string, sessionId: string): Promise<string[]>;
  /** The session `key` names when it was made within `windowMs`, or null. */
  findKeyed(
    workspaceId: string,
    space: KeyedSpace,
    key: string,
    windowMs: number,
  ): Promise<SessionRecord | null>;
}
