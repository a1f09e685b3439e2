import type { ListQuery, Page } from "../../kernel/pagination.js";
import type { BlobDigest, BlobReferences, RunSkill } from "../ports.js";

/** A custom skill: a workspace's named bundle with at least one immutable version. */
export interface SkillRecord {
  id: string;
  workspaceId: string;
  displayName: string;
  /** The kebab-case slug every version shares (its bundle's directory when mounted or downloaded). */
  name: string;
  latestVersionId: string;
  createdAt: number;
  updatedAt: number;
}

/** One file of a version, relative to the skill's root (`SKILL.md`, `scripts/run.py`). */
export interface SkillFileRecord {
  path: string;
  digest: BlobDigest;
  sizeBytes: number;
}

/** An immutable version: its front matter and its files' blobs, addressed by one content digest. */
export interface SkillVersionRecord {
  id: string;
  skillId: string;
  workspaceId: string;
  name: string;
  description: string;
  /** `sha256:` over the canonical listing of the version's paths and file digests (`skillDigest.ts`). */
  contentDigest: string;
  files: SkillFileRecord[];
  createdAt: number;
}

/** Where a skill comes from (the SDK's `source.type`); only `custom` skills are stored here. */
export type SkillSource = "custom" | "anthropic" | "anthropic_example" | "plugin";

export interface SkillListQuery extends ListQuery {
  /** Null: every source; any but `custom` lists nothing. */
  source: SkillSource | null;
}

/** The Skill family's store port (its SQL implementation lives in stores/sql). */
export interface SkillStore extends SkillRunReader, BlobReferences {
  readonly family: "skills";
  /** The skill and its first version, in one transaction. */
  createSkill(skill: SkillRecord, first: SkillVersionRecord): Promise<void>;
  getSkill(workspaceId: string, skillId: string): Promise<SkillRecord | null>;
  listSkills(workspaceId: string, query: SkillListQuery): Promise<Page<SkillRecord>>;
  /** The skill and every version of it; false when there was no such skill. */
  /** Deletes the skill and its versions; the blob digests they named (null: no such skill). */
  deleteSkill(workspaceId: string, skillId: string): Promise<BlobDigest[] | null>;
  /**
   * Appends a version and moves the skill's latest to it, in one transaction; false when the skill
   * is gone (deleted concurrently).
   */
  addVersion(version: SkillVersionRecord, now: number): Promise<boolean>;
  getVersion(workspaceId: string, skillId: string, versionId: string): Promise<SkillVersionRecord | null>;
  /** Newest first. Files are not loaded (`files` is empty): a listing never reads every bundle. */
  listVersions(workspaceId: string, skillId: string, query: ListQuery): Promise<Page<SkillVersionRecord>>;
  /**
   * Deletes one version unless it is the skill's only one, moving latest to the newest remaining;
   * `absent` when no such version, `last` when it is the only one (nothing written).
   */
  deleteVersion(
    workspaceId: string,
    skillId: string,
    versionId: string,
    now: number,
  ): Promise<{ outcome: "deleted"; digests: BlobDigest[] } | { outcome: "absent" } | { outcome: "last" }>;
}

/** What a run reads of a pinned skill version (the runtime loads it; see `RunSkill`). */
export interface SkillRunReader {
  /** The version's front matter and files; null when the skill or version is gone. */
  versionForRun(workspaceId: string, skillId: string, version: string): Promise<RunSkill | null>;
}
