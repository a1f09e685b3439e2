import type { ExecutableAgentRegistrar } from "../coordinator/ports.js";
import { canonicalJson, fingerprint } from "../kernel/canonicalJson.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError, invalid, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { ListQuery, Page } from "../kernel/pagination.js";
import { assertKnownAcpRuntime, type KnownAcpRuntimes, NO_ACP_RUNTIMES } from "./acpRuntimes.js";
import { type Actor, auditEntry } from "./adminAudit.js";
import type { AgentCreateInput, AgentDefinition, AgentUpdateInput } from "./agentDefinition.js";
import { applyAgentUpdate, resolveAgentCreate, validateAgentDefinition } from "./agentResolution.js";
import { mergeMultiagent, type RosterContext, resolveMultiagent, withSelfVersion } from "./multiagent.js";
import type {
  AgentHead,
  AgentListQuery,
  PublicationStore,
  SkillVersionResolver,
  StoredPublication,
} from "./ports.js";
import {
  logFields,
  type RegistrationLog,
  type RegistrationOutcome,
  registerPublication,
  silentRegistrationLog,
} from "./publicationRegistration.js";
import { NO_SKILLS, pinSkills } from "./skillPinning.js";

export interface AgentView {
  head: AgentHead;
  publication: StoredPublication;
}

/**
 * Agent authoring. Each change commits an immutable StoredPublication first and registers it with
 * the Coordinator second. A Coordinator that cannot be reached fails nothing: the publication stays
 * unregistered and the RegistrationReconciler lands it. A conflicting fingerprint fails closed.
 */
export class AgentService {
  constructor(
    private readonly store: PublicationStore,
    private readonly registrar: ExecutableAgentRegistrar,
    private readonly clock: Clock,
    private readonly log: RegistrationLog = silentRegistrationLog,
    /** Pins custom skills to exact versions at publication (none composed: custom skills are refused). */
    private readonly skills: SkillVersionResolver = NO_SKILLS,
    /** The ACP runtimes an `acp:<runtime>` model may name (none composed: every one is refused). */
    private readonly acpRuntimes: KnownAcpRuntimes = NO_ACP_RUNTIMES,
  ) {}

  async create(by: Actor, input: AgentCreateInput): Promise<AgentView> {
    const { workspaceId } = by;
    const definition = resolveAgentCreate(input);
    validateAgentDefinition(definition);
    assertKnownAcpRuntime(definition, this.acpRuntimes);
    const now = this.clock.now();
    const id = newId("agent", now);
    if (definition.multiagent !== null) {
      definition.multiagent = await resolveMultiagent(
        definition.multiagent,
        this.roster(workspaceId, { agentId: id, version: 1 }),
      );
    }
    definition.skills = await pinSkills(workspaceId, definition.skills, this.skills);
    const head: AgentHead = {
      id,
      workspaceId,
      latestVersion: 1,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
    const publication = this.publication(workspaceId, head.id, 1, definition, now);
    await this.store.createAgent(
      head,
      publication,
      agentAudit(by, "create", null, { head, publication }, now),
    );
    this.settleAfterCommit(publication, await this.register(publication));
    return { head, publication };
  }

  async retrieve(workspaceId: string, agentId: string, version?: number): Promise<AgentView> {
    const { head, publication } = await this.stored(workspaceId, agentId, version);
    return { head, publication };
  }

  /**
   * Optimistic update: `version`, when given, must be the current version. An update that changes
   * nothing returns the current version instead of minting an identical one.
   */
  async update(by: Actor, agentId: string, input: AgentUpdateInput): Promise<AgentView> {
    const { workspaceId } = by;
    const head = await this.head(workspaceId, agentId);
    if (head.archivedAt !== null) {
      throw new AwakenError("agent_archived", `agent ${agentId} is archived and cannot be updated`);
    }
    if (input.version !== undefined && input.version !== head.latestVersion) {
      throw new AwakenError(
        "version_mismatch",
        `agent ${agentId} is at version ${head.latestVersion}, not ${input.version}; retrieve it and apply your change again`,
        { retryable: false },
      );
    }
    const current = await this.store.getPublication(workspaceId, agentId, head.latestVersion);
    if (!current) throw new Error(`agent ${agentId} lost its publication ${head.latestVersion}`);
    const definition = applyAgentUpdate(current.definition, input);
    validateAgentDefinition(definition);
    assertKnownAcpRuntime(definition, this.acpRuntimes);
    if (input.multiagent) {
      // Resolved as of the current version, so an unchanged configuration compares equal below.
      definition.multiagent = await resolveMultiagent(
        mergeMultiagent(current.definition.multiagent, input.multiagent),
        this.roster(workspaceId, { agentId, version: head.latestVersion }),
      );
    }
    // New skills are pinned now (`latest`: the newest at this moment); kept ones stay as pinned.
    if (input.skills !== undefined) {
      definition.skills = await pinSkills(workspaceId, definition.skills, this.skills);
    }
    if (canonicalJson(definition) === canonicalJson(current.definition))
      return { head, publication: current };
    const now = this.clock.now();
    // The configuration's `self` names the version that owns it: the new one.
    definition.multiagent = withSelfVersion(definition.multiagent, agentId, head.latestVersion + 1);
    const next = this.publication(workspaceId, agentId, head.latestVersion + 1, definition, now);
    const nextHead = { ...head, latestVersion: next.version, updatedAt: now };
    const appended = await this.store.appendVersion(
      next,
      head.latestVersion,
      agentAudit(by, "update", { head, publication: current }, { head: nextHead, publication: next }, now),
    );
    if (!appended) {
      throw new AwakenError(
        "version_mismatch",
        `agent ${agentId} was updated concurrently; retrieve it and retry`,
        {
          retryable: false,
        },
      );
    }
    this.settleAfterCommit(next, await this.register(next));
    return { head: nextHead, publication: next };
  }

  async archive(by: Actor, agentId: string): Promise<AgentView> {
    const before = await this.retrieve(by.workspaceId, agentId);
    if (before.head.archivedAt !== null) return before;
    const now = this.clock.now();
    const after = { ...before, head: { ...before.head, archivedAt: now, updatedAt: now } };
    await this.store.archive(by.workspaceId, agentId, now, agentAudit(by, "archive", before, after, now));
    return this.retrieve(by.workspaceId, agentId);
  }

  list(
    workspaceId: string,
    query: AgentListQuery,
  ): Promise<Page<{ head: AgentHead; latest: StoredPublication }>> {
    return this.store.listAgents(workspaceId, query);
  }

  async listVersions(
    workspaceId: string,
    agentId: string,
    query: ListQuery,
  ): Promise<{ head: AgentHead; page: Page<StoredPublication> }> {
    const head = await this.head(workspaceId, agentId);
    return { head, page: await this.store.listVersions(workspaceId, agentId, query) };
  }

  /**
   * Resolves what a new session pins: the exact version asked for, or the latest. A version not yet
   * registered is registered now (idempotently), so a session start converges without waiting for
   * the reconciler; a session never pins a version the Coordinator does not hold.
   */
  async resolveForSession(
    workspaceId: string,
    agentId: string,
    version?: number,
  ): Promise<StoredPublication> {
    const { head, publication, registeredAt } = await this.stored(workspaceId, agentId, version);
    if (head.archivedAt !== null) {
      throw invalid(`agent ${agentId} is archived and cannot start new sessions`);
    }
    // Registered already: the catalog checked its fingerprint then, and a catalog entry never
    // changes, so the session start costs one read instead of a round trip to the Coordinator.
    // A refused one still asks: it converges if the catalog was repaired, else fails closed again.
    if (registeredAt !== null) return publication;
    const outcome = await this.register(publication);
    if (outcome.kind === "unavailable") {
      throw new AwakenError(
        "unavailable",
        `agent ${agentId} version ${publication.version} is not yet registered with the coordinator; retry shortly`,
        { retryable: true, cause: outcome.error },
      );
    }
    if (outcome.kind !== "registered") throw outcome.error;
    return publication;
  }

  /** The head and one publication (the latest by default), in one read. */
  private async stored(
    workspaceId: string,
    agentId: string,
    version: number | undefined,
  ): Promise<AgentView & { registeredAt: number | null }> {
    const found = await this.store.getAgent(workspaceId, agentId, version);
    if (!found) throw notFound("agent", agentId);
    const { head, publication, registeredAt } = found;
    if (!publication) {
      throw new AwakenError(
        "not_found",
        `agent ${agentId} has no version ${version}; it has versions 1-${head.latestVersion}`,
      );
    }
    return { head, publication, registeredAt };
  }

  /** What resolving a multiagent roster reads: the workspace's agents and their versions' rosters. */
  private roster(workspaceId: string, self: RosterContext["self"]): RosterContext {
    return {
      self,
      agent: async (agentId) => {
        const head = await this.store.getHead(workspaceId, agentId);
        if (!head) return null;
        return {
          latestVersion: head.latestVersion,
          archived: head.archivedAt !== null,
          multiagentAt: async (version) => {
            if (version > head.latestVersion) return undefined;
            const publication = await this.store.getPublication(workspaceId, agentId, version);
            return publication ? publication.definition.multiagent : undefined;
          },
        };
      },
    };
  }

  private async head(workspaceId: string, agentId: string): Promise<AgentHead> {
    const head = await this.store.getHead(workspaceId, agentId);
    if (!head) throw notFound("agent", agentId);
    return head;
  }

  private publication(
    workspaceId: string,
    agentId: string,
    version: number,
    definition: AgentDefinition,
    now: number,
  ): StoredPublication {
    return {
      workspaceId,
      agentId,
      version,
      fingerprint: fingerprint(definition),
      definition,
      createdAt: now,
    };
  }

  private register(p: StoredPublication): Promise<RegistrationOutcome> {
    return registerPublication(this.store, this.registrar, this.clock, this.log, p);
  }

  /**
   * After a commit only a refusal fails the call (the version can never run); anything else leaves
   * a durable publication for the reconciler, so the author's change is not reported as lost.
   */
  private settleAfterCommit(p: StoredPublication, outcome: RegistrationOutcome): void {
    if (outcome.kind === "refused") throw outcome.error;
    if (outcome.kind === "unavailable") {
      this.log.warn(logFields(p, outcome.error), "publication not registered yet; the reconciler retries it");
    } else if (outcome.kind === "failed") {
      this.log.error(logFields(p, outcome.error), "the coordinator rejected the publication's registration");
    }
  }
}

/** An agent's audit entry: the digests are of its head and publication, which hold no secret. */
function agentAudit(
  by: Actor,
  action: "create" | "update" | "archive",
  before: AgentView | null,
  after: AgentView,
  at: number,
) {
  return auditEntry(by, {
    action,
    resourceType: "agent",
    resourceId: after.head.id,
    revision: after.publication.version,
    before,
    after,
    at,
  });
}
