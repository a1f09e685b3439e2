import { AwakenError, invalid, notFound } from "../../kernel/errors.js";
import { newId } from "../../kernel/ids.js";
import type { ListQuery, Page } from "../../kernel/pagination.js";
import { blobOwners, deleteBlobIfUnreferenced } from "../blobs/blobCollection.js";
import type { BlobDigest, RunSkill } from "../ports.js";
import type { ResourceDeps } from "../services.js";
import type { SkillListQuery, SkillRecord, SkillStore, SkillVersionRecord } from "./ports.js";
import { skillArchive } from "./skillArchive.js";
import { type SkillBundle, type UploadedSkillFile, validateSkillBundle } from "./skillBundle.js";
import { skillContentDigest } from "./skillDigest.js";
import { SKILL_DISPLAY_NAME_MAX, type SkillLimits, skillLimitsFromEnv } from "./skillLimits.js";

/** What names the newest version wherever a version is asked for. */
export const LATEST = "latest";

/**
 * Custom skills: bundles of files under one directory with a SKILL.md, kept as immutable versions
 * whose files are content-addressed blobs. A skill always has at least one version; the newest is
 * its `latest`. Another workspace's skill is answered as not found.
 */
export class SkillService {
  readonly limits: SkillLimits;
  private readonly store: SkillStore;

  constructor(private readonly deps: ResourceDeps) {
    // A bad AWAKEN_SKILL_MAX_BYTES throws here, at composition: start-up stops.
    this.limits = skillLimitsFromEnv(deps.env);
    this.store = deps.stores.skills;
  }

  async create(
    workspaceId: string,
    input: { files: readonly UploadedSkillFile[]; displayName?: string | null },
  ): Promise<{ skill: SkillRecord; version: SkillVersionRecord }> {
    const displayName = input.displayName ?? null;
    if (displayName !== null) checkDisplayName(displayName);
    const bundle = validateSkillBundle(input.files, this.limits);
    const now = this.deps.clock.now();
    const skillId = newId("skill", now);
    const version = await this.storeVersion(workspaceId, skillId, bundle, now);
    const skill: SkillRecord = {
      id: skillId,
      workspaceId,
      displayName: displayName ?? bundle.name,
      name: bundle.name,
      latestVersionId: version.id,
      createdAt: now,
      updatedAt: now,
    };
    await this.store.createSkill(skill, version);
    return { skill, version };
  }

  async retrieve(workspaceId: string, skillId: string): Promise<SkillRecord> {
    const skill = await this.store.getSkill(workspaceId, skillId);
    if (!skill) throw notFound("skill", skillId);
    return skill;
  }

  list(workspaceId: string, query: SkillListQuery): Promise<Page<SkillRecord>> {
    return this.store.listSkills(workspaceId, query);
  }

  /** Deletes the skill with every version. Agents pinned to one keep the pin; their runs find it gone. */
  async delete(workspaceId: string, skillId: string): Promise<void> {
    const digests = await this.store.deleteSkill(workspaceId, skillId);
    if (!digests) throw notFound("skill", skillId);
    await this.collect(digests);
  }

  /** A new immutable version; it becomes latest. Its front matter name must be the skill's. */
  async createVersion(
    workspaceId: string,
    skillId: string,
    files: readonly UploadedSkillFile[],
  ): Promise<SkillVersionRecord> {
    const skill = await this.retrieve(workspaceId, skillId);
    const bundle = validateSkillBundle(files, this.limits);
    if (bundle.name !== skill.name) {
      throw invalid(
        `the bundle's skill name ${JSON.stringify(bundle.name)} is not this skill's ${JSON.stringify(skill.name)}; every version keeps the name set at creation`,
      );
    }
    const now = this.deps.clock.now();
    const version = await this.storeVersion(workspaceId, skillId, bundle, now);
    if (!(await this.store.addVersion(version, now))) throw notFound("skill", skillId);
    return version;
  }

  /** `latest` names the newest version. */
  async retrieveVersion(workspaceId: string, skillId: string, version: string): Promise<SkillVersionRecord> {
    const skill = await this.retrieve(workspaceId, skillId);
    const versionId = version === LATEST ? skill.latestVersionId : version;
    const found = await this.store.getVersion(workspaceId, skillId, versionId);
    if (!found) throw notFound("skill version", version);
    return found;
  }

  async listVersions(
    workspaceId: string,
    skillId: string,
    query: ListQuery,
  ): Promise<Page<SkillVersionRecord>> {
    await this.retrieve(workspaceId, skillId);
    return this.store.listVersions(workspaceId, skillId, query);
  }

  /** A skill keeps at least one version: its only one is deleted with the skill. */
  async deleteVersion(workspaceId: string, skillId: string, versionId: string): Promise<void> {
    await this.retrieve(workspaceId, skillId);
    const deleted = await this.store.deleteVersion(workspaceId, skillId, versionId, this.deps.clock.now());
    if (deleted.outcome === "absent") throw notFound("skill version", versionId);
    if (deleted.outcome === "last") {
      throw invalid(
        `version ${versionId} is skill ${skillId}'s only version; a skill holds at least one, so delete the skill instead`,
      );
    }
    await this.collect(deleted.digests);
  }

  /** The bytes deleted versions held, where no family (a file, another version) still names them. */
  private async collect(digests: readonly BlobDigest[]): Promise<void> {
    for (const digest of digests) {
      await deleteBlobIfUnreferenced(this.deps.blobs, blobOwners(this.deps.stores), digest);
    }
  }

  /** The version as a zip of `<name>/…`, the same bytes every time. */
  async download(
    workspaceId: string,
    skillId: string,
    version: string,
  ): Promise<{ filename: string; bytes: Uint8Array }> {
    const found = await this.retrieveVersion(workspaceId, skillId, version);
    const files = await Promise.all(
      found.files.map(async (file) => {
        const bytes = await this.deps.blobs.get(file.digest);
        if (!bytes) throw new AwakenError("internal", `skill version ${found.id} lost a file's content`);
        return { path: file.path, bytes };
      }),
    );
    return { filename: `${found.name}.zip`, bytes: skillArchive(found.name, files) };
  }

  /**
   * What a publication pins: the exact version id `version` names (absent or `latest`: the newest
   * now). An unknown skill or version is the caller's 400, naming it (not a 404: the agent exists).
   */
  async resolveVersion(workspaceId: string, skillId: string, version: string | null): Promise<string> {
    const skill = await this.store.getSkill(workspaceId, skillId);
    if (!skill)
      throw invalid(`skills: custom skill ${JSON.stringify(skillId)} was not found in this workspace`);
    if (version === null || version === LATEST) return skill.latestVersionId;
    if (!(await this.store.getVersion(workspaceId, skillId, version))) {
      throw invalid(`skills: skill ${skillId} has no version ${JSON.stringify(version)}`);
    }
    return version;
  }

  versionForRun(workspaceId: string, skillId: string, version: string): Promise<RunSkill | null> {
    return this.store.versionForRun(workspaceId, skillId, version);
  }

  /** Stores the bundle's bytes (content-addressed: idempotent) and describes the version. */
  private async storeVersion(
    workspaceId: string,
    skillId: string,
    bundle: SkillBundle,
    now: number,
  ): Promise<SkillVersionRecord> {
    const files = [];
    for (const file of bundle.files) {
      const { digest, size } = await this.deps.blobs.put(file.bytes);
      files.push({ path: file.path, digest, sizeBytes: size });
    }
    return {
      id: newId("skillver", now),
      skillId,
      workspaceId,
      name: bundle.name,
      description: bundle.description,
      contentDigest: skillContentDigest(files),
      files,
      createdAt: now,
    };
  }
}

function checkDisplayName(displayName: string): void {
  if (displayName.trim() === "") throw invalid("display_name: must not be blank");
  if (displayName.length > SKILL_DISPLAY_NAME_MAX) {
    throw invalid(`display_name: longer than ${SKILL_DISPLAY_NAME_MAX} characters`);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a single-line label holds none
  if (/[\u0000-\u001f\u007f]/.test(displayName)) throw invalid("display_name: must be a single line of text");
}
