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

  async create(workspaceId: string, cmd: CreateEnvironmentCommand): Promise<EnvironmentRecord> {
    const config = resolveEnvironmentConfig(cmd.config);
    admitSandboxTier(config, this.tierPolicy, "config.sandbox.tier");
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
    await this.store.create(record);
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

  async update(workspaceId: string, id: string, cmd: UpdateEnvironmentCommand): Promise<EnvironmentRecord> {
    const current = await this.get(workspaceId, id);
    if (current.archivedAt !== null) {
      throw new AwakenError("environment_archived", `environment ${id} is archived and cannot be updated`, {
        details: { error_code: "environment_archived" },
      });
    }
    const config = applyEnvironmentConfigUpdate(current.config, cmd.config);
    const configChanged = canonicalJson(config) !== canonicalJson(current.config);
    // A new revision must meet today's rule; an unchanged one (a rename) is left as it was.
    if (configChanged) admitSandboxTier(config, this.tierPolicy, "config.sandbox.tier");
    const next: EnvironmentRecord = {
      ...current,
      name: cmd.name ?? current.name,
      description: cmd.description !== undefined ? cmd.description || null : current.description,
      scope: cmd.scope !== undefined ? cmd.scope : current.scope,
      metadata: applyMetadataPatch(current.metadata, cmd.metadata, { emptyStringDeletes: true }),
      config,
      revision: configChanged ? current.revision + 1 : current.revision,
      updatedAt: this.clock.now(),
    };
    await this.store.update(next, configChanged);
    return next;
  }

  async archive(workspaceId: string, id: string): Promise<EnvironmentRecord> {
    const current = await this.get(workspaceId, id);
    if (current.archivedAt !== null) return current;
    const now = this.clock.now();
    const next = { ...current, archivedAt: now, updatedAt: now };
    await this.store.update(next, false);
    return next;
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    await this.get(workspaceId, id);
    await this.store.delete(workspaceId, id);
  }

  list(
    workspaceId: string,
    query: ListQuery & { includeArchived: boolean },
  ): Promise<Page<EnvironmentRecord>> {
    return this.store.list(workspaceId, query);
  }
}
