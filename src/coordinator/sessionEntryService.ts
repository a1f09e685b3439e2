import type { Actor } from "../control/adminAudit.js";
import type { Clock } from "../kernel/clock.js";
import { notFound } from "../kernel/errors.js";
import type { EnvironmentConfigInput } from "./environmentConfig.js";
import type { EnvironmentService } from "./environmentService.js";
import type {
  EnvironmentRecord,
  EnvironmentStore,
  KeyedSpace,
  SessionNameStore,
  SessionRecord,
  SessionStore,
} from "./ports.js";
import { earlyRealizationNeeds } from "./sandboxAdmission.js";
import type { AgentPinner, SessionEntry, StartSessionCommand } from "./sessionEntry.js";
import {
  claimName,
  DEFAULT_NAME_CLAIM_TIMING,
  isSessionId,
  type NameClaimTiming,
  type NameTarget,
  validateSessionName,
} from "./sessionEntryNames.js";
import type { SessionService } from "./sessionService.js";

/**
 * The workspace's default environments, by key in the name store's `default_environment` space:
 * the plain one, and one that realizes its sandbox eagerly for agents that need it before their
 * first tool call (subagents, skills, mounts, a remote delegate), which the protocols that cannot
 * name an environment would otherwise be refused.
 */
const DEFAULTS = {
  plain: { key: "default", name: "default", config: null },
  eager: {
    key: "default_eager",
    name: "default-eager",
    config: { type: "cloud", sandbox: { provisioning: "eager" } },
  },
} as const satisfies Record<string, { key: string; name: string; config: EnvironmentConfigInput | null }>;
export const DEFAULT_ENVIRONMENT_NAME = DEFAULTS.plain.name;

export interface SessionEntryDeps {
  pinner: AgentPinner;
  sessions: Pick<SessionService, "create" | "delete">;
  sessionRecords: Pick<SessionStore, "get">;
  environments: Pick<EnvironmentService, "create" | "delete">;
  environmentRecords: Pick<EnvironmentStore, "get">;
  names: SessionNameStore;
  clock: Clock;
  timing?: NameClaimTiming;
}

/**
 * The one way every edge opens a session: the agent pinned by Control, the environment the client
 * named or the workspace's default one (a cloud environment made on first use, an ordinary
 * environment from then on), then `SessionService.create`. Client-named sessions bind a name on
 * the first use; a session id always names its own session.
 */
export class SessionEntryService implements SessionEntry {
  private readonly timing: NameClaimTiming;

  constructor(private readonly deps: SessionEntryDeps) {
    this.timing = deps.timing ?? DEFAULT_NAME_CLAIM_TIMING;
  }

  async start(cmd: StartSessionCommand): Promise<SessionRecord> {
    // Pinned first: a bad agent reference makes no default environment.
    const agent = await this.deps.pinner.pin(cmd.workspaceId, cmd.agent);
    const environmentId =
      cmd.environmentId ??
      (
        await this.defaultEnvironment(
          cmd.workspaceId,
          earlyRealizationNeeds(agent.definition, cmd.resources ?? []).length > 0 ? "eager" : "plain",
        )
      ).id;
    return this.deps.sessions.create({
      workspaceId: cmd.workspaceId,
      agent,
      environmentId,
      title: cmd.title ?? null,
      metadata: cmd.metadata ?? {},
      resources: cmd.resources ?? [],
      vaultIds: cmd.vaultIds ?? [],
      budget: cmd.budget ?? null,
      initialInputs: cmd.initialInputs ?? [],
      userProfileId: cmd.userProfileId ?? null,
    });
  }

  async findNamed(workspaceId: string, name: string): Promise<SessionRecord | null> {
    validateSessionName(name);
    if (isSessionId(name)) return this.deps.sessionRecords.get(workspaceId, name);
    const entry = await this.deps.names.get(workspaceId, "session", name);
    if (entry?.state !== "bound") return null;
    return this.deps.sessionRecords.get(workspaceId, entry.targetId);
  }

  async openNamed(
    workspaceId: string,
    name: string,
    cmd: Omit<StartSessionCommand, "workspaceId">,
  ): Promise<SessionRecord> {
    validateSessionName(name);
    if (isSessionId(name)) {
      const session = await this.deps.sessionRecords.get(workspaceId, name);
      if (!session) throw notFound("session", name);
      return session;
    }
    return claimName(
      this.deps.names,
      this.deps.clock,
      this.timing,
      { workspaceId, space: "session", name },
      {
        existing: (id) => this.deps.sessionRecords.get(workspaceId, id),
        ...this.newSession(workspaceId, cmd),
      },
    );
  }

  namesOf(workspaceId: string, sessionId: string): Promise<string[]> {
    return this.deps.names.namesOf(workspaceId, "session", sessionId);
  }

  async openKeyed(
    workspaceId: string,
    space: KeyedSpace,
    key: string,
    windowMs: number,
    cmd: Omit<StartSessionCommand, "workspaceId">,
  ): Promise<SessionRecord> {
    return claimName(
      this.deps.names,
      this.deps.clock,
      this.timing,
      { workspaceId, space, name: key },
      {
        // Past the window the key is free again: its old session is left alone, a new one is made.
        existing: (id) => this.recentSession(workspaceId, id, windowMs),
        ...this.newSession(workspaceId, cmd),
      },
    );
  }

  async findKeyed(
    workspaceId: string,
    space: KeyedSpace,
    key: string,
    windowMs: number,
  ): Promise<SessionRecord | null> {
    const entry = await this.deps.names.get(workspaceId, space, key);
    if (entry?.state !== "bound") return null;
    return this.recentSession(workspaceId, entry.targetId, windowMs);
  }

  /** How a name claim makes its session, and undoes one another caller's binding beat. */
  private newSession(
    workspaceId: string,
    cmd: Omit<StartSessionCommand, "workspaceId">,
  ): Pick<NameTarget<SessionRecord>, "create" | "discard"> {
    return {
      create: async () => {
        const session = await this.start({ ...cmd, workspaceId });
        return { id: session.id, value: session };
      },
      discard: (session) => this.deps.sessions.delete(workspaceId, session.id),
    };
  }

  private async recentSession(
    workspaceId: string,
    id: string,
    windowMs: number,
  ): Promise<SessionRecord | null> {
    const session = await this.deps.sessionRecords.get(workspaceId, id);
    return session && session.createdAt >= this.deps.clock.now() - windowMs ? session : null;
  }

  /**
   * The workspace's default environment. An archived or deleted one is replaced by a new one: the
   * clients that rely on it (the UI protocols) cannot name another.
   */
  private defaultEnvironment(workspaceId: string, kind: keyof typeof DEFAULTS): Promise<EnvironmentRecord> {
    const made = DEFAULTS[kind];
    // The server makes (or discards) the default environment on a session's behalf.
    const system: Actor = { workspaceId, actor: "system" };
    return claimName(
      this.deps.names,
      this.deps.clock,
      this.timing,
      { workspaceId, space: "default_environment", name: made.key },
      {
        existing: async (id) => {
          const env = await this.deps.environmentRecords.get(workspaceId, id);
          return env && env.archivedAt === null ? env : null;
        },
        create: async () => {
          const env = await this.deps.environments.create(system, {
            name: made.name,
            description:
              kind === "eager"
                ? "Made for sessions started without an environment whose agent needs its sandbox from the start"
                : "Made for sessions started without an environment",
            scope: null,
            metadata: {},
            config: made.config,
          });
          return { id: env.id, value: env };
        },
        discard: (env) => this.deps.environments.delete(system, env.id),
      },
    );
  }
}
