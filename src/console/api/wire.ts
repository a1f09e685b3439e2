/**
 * The wire types the Console reads and writes: the official SDK's Managed Agents types, which the
 * server's DTO schemas follow, plus the few fields the server adds to them.
 */
import type {
  BetaManagedAgentsSessionEvent,
  BetaManagedAgentsStreamSessionEvents,
} from "@anthropic-ai/sdk/resources/beta/sessions/events";
import type { BetaManagedAgentsSession } from "@anthropic-ai/sdk/resources/beta/sessions/sessions";

export type { BetaManagedAgentsAgent as Agent } from "@anthropic-ai/sdk/resources/beta/agents/agents";
export type { BetaEnvironment as Environment } from "@anthropic-ai/sdk/resources/beta/environments/environments";
export type { BetaFileMetadata as FileMetadata } from "@anthropic-ai/sdk/resources/beta/files";
export type {
  BetaManagedAgentsMemory as Memory,
  BetaManagedAgentsMemoryListItem as MemoryListItem,
} from "@anthropic-ai/sdk/resources/beta/memory-stores/memories";
export type { BetaManagedAgentsMemoryStore as MemoryStore } from "@anthropic-ai/sdk/resources/beta/memory-stores/memory-stores";
export type {
  BetaManagedAgentsActor as Actor,
  BetaManagedAgentsMemoryVersion as MemoryVersion,
} from "@anthropic-ai/sdk/resources/beta/memory-stores/memory-versions";
export type { BetaManagedAgentsSessionResource as SessionResource } from "@anthropic-ai/sdk/resources/beta/sessions/resources";
export type { BetaSkill as Skill } from "@anthropic-ai/sdk/resources/beta/skills/skills";
export type { BetaSkillVersion as SkillVersion } from "@anthropic-ai/sdk/resources/beta/skills/versions";
export type { BetaManagedAgentsCredential as Credential } from "@anthropic-ai/sdk/resources/beta/vaults/credentials";
export type { BetaManagedAgentsVault as Vault } from "@anthropic-ai/sdk/resources/beta/vaults/vaults";

export type Session = BetaManagedAgentsSession;
export type SessionStatus = Session["status"];
export const SESSION_STATUSES: readonly SessionStatus[] = ["idle", "running", "rescheduling", "terminated"];

/** A committed event as history and the stream carry it. */
export type SessionEvent = BetaManagedAgentsSessionEvent;
/** What the stream may yield: committed events and the previews (`event_start`, `event_delta`). */
export type StreamEvent = BetaManagedAgentsStreamSessionEvents;

/** The server names the provider and model on both ends of a model request span. */
export interface ModelRequestFields {
  provider?: string;
  model?: string;
}

export type { BetaManagedAgentsSessionThread as SessionThread } from "@anthropic-ai/sdk/resources/beta/sessions/threads/threads";

/** The server marks a tool use the ACP harness ran itself (not one Awaken's tools ran). */
export interface HarnessToolFields {
  awaken_harness?: boolean;
}
