import { type Actor, type AuditAction, auditEntry } from "../control/adminAudit.js";
import { canonicalJson } from "../kernel/canonicalJson.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { applyMetadataPatch } from "../kernel/metadata.js";
import type { ListQuery, Page } from "../kernel/pagination.js";
import {
  applyEnvironmentConfigUpdate,
  type EnvironmentConfigInput,
  resolveEnvironmentConfig,
} from "./environmentConfig.js";
import { admitDerivedImagePackages } from "./imageBuilds/derivedImagePackages.js";
import type { EnvironmentRecord, EnvironmentStore } from "./ports.js";
import { admitSandboxTier, type SandboxTierPolicy, STRICT_TIER_POLICY } from "./sandboxTierPolicy.js";

export interface CreateEnvironmentCommand {
  name: string;
  description: string | null;
  scope: string | null;
  metadata: Record<string, string>;
  config: EnvironmentConfigInput | null | undefined;
}

export interface UpdateEnvironmentCommand {
  name?: string;
  description?: string | null;
  scope?: string | null;
  metadata?: Record<string, string | null>;
  config?: EnvironmentConfigInput | null;
}

/** Environments: a mutable head over immutable config revisions that sessions pin. */
export class EnvironmentService {
  constructor(
    private readonly store: EnvironmentStore,
    private readonly clock: Clock,
    /** Whether a config may name a tier weaker than the default (the operator's option). */
    private readonly tierPolicy: SandboxTierPolicy = STRICT_TIER_POLICY,
  ) {}

  async create(by: Actor, cmd: CreateEnvironmentCommand): Promise<EnvironmentRecord> {
    const { workspaceId } = by;
    const config = resolveEnvironmentConfig(cmd.config);
    admitSandboxTier(config, this.tierPolicy, "config.sandbox.tier");
    admitDerivedImagePackages(config);
    const now = this.clock.now();
    const record: EnvironmentRecord = {
      id: newId("env", now),
      workspaceId,
      name: cmd.name,
      description: cmd.description,
      scope: cmd.scope,
      metadata: cmd.metadata,
      config,
      revision: 1,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
    await this.store.create(record, environmentAudit(by, "create", null, record, now));
    return record;
  }

  async get(workspaceId: string, id: string): Promise<EnvironmentRecord> {
    const record = await this.store.get(workspaceId, id);
    if (!record) {
      throw new AwakenError(
        "environment_not_found",
        `environment ${JSON.stringify(id)} was not found in this workspace`,
        {
          details: { error_code: "environment_not_found" },
        },
      );
    }
    return record;
  }

  async update(by: Actor, id: string, cmd: UpdateEnvironmentCommand): Promise<EnvironmentRecord> {
    const current = await this.get(by.workspaceId, id);
    if (current.archivedAt !== null) {
      throw new AwakenError("environment_archived", `environment ${id} is archived and cannot be updated`, {
        details: { error_code: "environment_archived" },
      });
    }
    const config = applyEnvironmentConfigUpdate(current.config, cmd.config);
    const configChanged = canonicalJson(config) !== canonicalJson(current.config);
    // A new revision must meet today's rule; an unchanged one (a rename) is left as it was.
    if (configChanged) {
      admitSandboxTier(config, this.tierPolicy, "config.sandbox.tier");
      admitDerivedImagePackages(config);
    }
    const now = this.clock.now();
    const next: EnvironmentRecord = {
      ...current,
      name: cmd.name ?? current.name,
      description: cmd.description !== undefined ? cmd.description || null : current.description,
      scope: cmd.scope !== undefined ? cmd.scope : current.scope,
      metadata: applyMetadataPatch(current.metadata, cmd.metadata, { emptyStringDeletes: true }),
      config,
      revision: configChanged ? current.revision + 1 : current.revision,
      updatedAt: now,
    };
    const audit = environmentAudit(by, "update", current, next, now);
    if (!(await this.store.update(next, configChanged, audit))) await this.get(by.workspaceId, id);
    return next;
  }

  async archive(by: Actor, id: string): Promise<EnvironmentRecord> {
    const current = await this.get(by.workspaceId, id);
    if (current.archivedAt !== null) return current;
    const now = this.clock.now();
    const next = { ...current, archivedAt: now, updatedAt: now };
    const audit = environmentAudit(by, "archive", current, next, now);
    if (!(await this.store.update(next, false, audit))) await this.get(by.workspaceId, id);
    return next;
  }

  async delete(by: Actor, id: string): Promise<void> {
    const current = await this.get(by.workspaceId, id);
    const now = this.clock.now();
    const audit = environmentAudit(by, "delete", current, null, now);
    if (!(await this.store.delete(by.workspaceId, id, audit))) await this.get(by.workspaceId, id);
  }

  list(
    workspaceId: string,
    query: ListQuery & { includeArchived: boolean },
  ): Promise<Page<EnvironmentRecord>> {
    return this.store.list(workspaceId, query);
  }
}

function environmentAudit(
  by: Actor,
  action: AuditAction,
  before: EnvironmentRecord | null,
  after: EnvironmentRecord | null,
  at: number,
) {
  const view = after ?? before;
  return auditEntry(by, {
    action,
    resourceType: "environment",
    resourceId: view?.id ?? "",
    revision: view?.revision ?? null,
    before,
    after,
    at,
  });
}
