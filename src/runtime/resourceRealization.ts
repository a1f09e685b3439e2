/**
 * The run's resources, realized once at its start under its claim: the session's files, memory
 * stores and repositories and the agent's pinned skills (`RunResources.resolve`), recorded in the
 * history (`RESOURCES_REALIZED`) and offered one of two ways:
 *
 * - `mounted` (a cloud environment on the bwrap tier): files, skills and memory stores are written
 *   on the worker's host under `<mountArea>/<sessionId>` and bound into the sandbox at their mount
 *   paths (read-only but for read-write memory stores), the skills listed in the system prompt;
 *   read-write stores are written back after each tool step (memoryWriteBack.ts).
 * - `tools` (no sandbox: a self-hosted environment, or the `none` tier, which has no mount
 *   namespace): skills and memory stores are served as runtime tools. Files and repositories need
 *   a filesystem, which admission already refused for such sessions.
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { sandboxTierOf } from "../coordinator/environmentConfig.js";
import type { TypedFact } from "../coordinator/factVocabulary.js";
import type { Activation } from "../coordinator/ports.js";
import { AwakenError } from "../kernel/errors.js";
import type { JsonObject } from "../kernel/json.js";
import {
  type MemoryChangeOutcome,
  type ResourceClaim,
  ResourceClaimLostError,
  type RunResource,
  type RunSkill,
} from "../resources/ports.js";
import type { SandboxMount, SandboxMounts, SandboxRepository } from "../sandbox/ports.js";
import { memoryTools } from "./memoryTools.js";
import { knownFilesOf, MountedMemoryStore, writeBackNotes } from "./memoryWriteBack.js";
import { idle, sessionError } from "./modelFacts.js";
import { syncMountTree } from "./mountFiles.js";
import type { RunContext } from "./runContext.js";
import { SKILLS_MOUNT, skillCatalogPrompt, skillDirName } from "./skillCatalog.js";
import { skillTools } from "./skillTools.js";
import { addRuntimeTools, type CatalogEntry } from "./toolCatalog.js";
import { memoryWrittenBack, resourcesRealized } from "./toolFacts.js";

export type ResourceMode = "mounted" | "tools";

/** An id or version as a host path segment: ours are plain already; anything else is refused. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,199}$/;

/** A store- or skill-relative path that stays inside its directory, or null. */
export function safeRelativePath(path: string): string | null {
  if (path === "" || path.length > 1024 || path.includes("\0") || path.startsWith("/")) return null;
  const segments = path.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) return null;
  return path;
}

/** Where each of a run's resources goes, on the host and in the sandbox (no I/O). */
export interface MountPlanEntry {
  mount: SandboxMount;
  content:
    | { kind: "file"; resource: Extract<RunResource, { type: "file" }> }
    | { kind: "skill"; skill: RunSkill }
    | { kind: "memory"; resource: Extract<RunResource, { type: "memory_store" }> };
}

export function planMounts(resources: readonly RunResource[], skills: readonly RunSkill[]): MountPlanEntry[] {
  const plan: MountPlanEntry[] = [];
  for (const resource of resources) {
    if (resource.type === "file") {
      if (!SEGMENT.test(resource.id))
        throw new RealizationRefused(`resource id ${resource.id} is not a plain id`);
      plan.push({
        mount: { sandboxPath: resource.mountPath, hostPath: `files/${resource.id}`, readOnly: true },
        content: { kind: "file", resource },
      });
    } else if (resource.type === "memory_store") {
      if (!SEGMENT.test(resource.memoryStoreId))
        throw new RealizationRefused(`memory store id ${resource.memoryStoreId} is not a plain id`);
      plan.push({
        mount: {
          sandboxPath: resource.mountPath,
          hostPath: `memory/${resource.memoryStoreId}`,
          readOnly: resource.access !== "read_write",
        },
        content: { kind: "memory", resource },
      });
    }
    // Repositories are cloned into the workspace by the sandbox's own set-up, not mounted.
  }
  for (const skill of skills) {
    if (!SEGMENT.test(skill.skillId) || !SEGMENT.test(skill.version))
      throw new RealizationRefused(`skill ${skill.skillId} version ${skill.version} is not a plain id`);
    plan.push({
      mount: {
        sandboxPath: `${SKILLS_MOUNT}/${skillDirName(skill)}`,
        hostPath: `skills/${skill.skillId}@${skill.version}`,
        readOnly: true,
      },
      content: { kind: "skill", skill },
    });
  }
  return plan;
}

/** The realization's record: ids, types, paths, digests and versions; never content or a token. */
export function realizedBody(
  mode: ResourceMode,
  resources: readonly RunResource[],
  skills: readonly RunSkill[],
): JsonObject {
  return {
    mode,
    resources: resources.map((r): JsonObject => {
      switch (r.type) {
        case "file":
          return {
            type: r.type,
            id: r.id,
            file_id: r.fileId,
            mount_path: r.mountPath,
            digest: r.digest,
            size_bytes: r.sizeBytes,
          };
        case "memory_store":
          return {
            type: r.type,
            memory_store_id: r.memoryStoreId,
            mount_path: r.mountPath,
            access: r.access,
          };
        default:
          return {
            type: r.type,
            id: r.id,
            mount_path: r.mountPath,
            has_token: r.hasToken,
            checkout: r.checkout,
          };
      }
    }),
    skills: skills.map((s) => ({
      skill_id: s.skillId,
      version: s.version,
      name: s.name,
      ...(mode === "mounted" ? { path: `${SKILLS_MOUNT}/${skillDirName(s)}` } : {}),
    })),
  };
}

export class ResourceRealization {
  private mode: ResourceMode = "tools";
  private skills: RunSkill[] = [];
  private resources: RunResource[] = [];
  private mountSet: SandboxMounts | undefined;
  private readonly memory: MountedMemoryStore[] = [];

  constructor(
    private readonly run: RunContext,
    private readonly catalog: Map<string, CatalogEntry>,
  ) {}

  get claim(): ResourceClaim {
    const a = this.run.activation;
    return {
      workspaceId: a.workspaceId,
      sessionId: a.sessionId,
      runId: a.runId,
      owner: a.owner,
      epoch: a.epoch,
    };
  }

  /** The mounts the session's sandbox binds (none when nothing is mounted). */
  get mounts(): SandboxMounts | undefined {
    return this.mountSet;
  }

  /**
   * Whether the run has mounted content or repositories to clone, which need its sandbox before
   * the model's first call.
   */
  get needsSandbox(): boolean {
    return this.mountSet !== undefined || this.resources.some((r) => r.type === "github_repository");
  }

  /** What the sandbox's spec takes of the run's resources: its mounts and the repositories to clone. */
  sandboxParts(): { mounts?: SandboxMounts; repositories: SandboxRepository[] } {
    const port = this.run.ports.resources;
    const claim = this.claim;
    const repositories = this.resources.flatMap((r): SandboxRepository[] =>
      r.type === "github_repository"
        ? [
            {
              id: r.id,
              url: r.url,
              checkout: r.checkout,
              sandboxPath: r.mountPath,
              // Opened under the claim only when a clone is made; the cloner zeroes it.
              token: async () => (r.hasToken && port ? port.repositoryToken(claim, r.id) : null),
            },
          ]
        : [],
    );
    return { ...(this.mountSet === undefined ? {} : { mounts: this.mountSet }), repositories };
  }

  /** The system prompt's parts about skills and memory stores; null: nothing to say. */
  prompt(): string | null {
    const parts = [skillCatalogPrompt(this.skills, this.mode === "mounted" ? "mounted" : "tools")];
    const stores = this.resources.filter((r) => r.type === "memory_store");
    if (stores.length > 0) {
      const lines = stores.map((s) => {
        const where =
          this.mode === "mounted" ? `mounted at ${s.mountPath}` : `named "${s.name}" in the memory_* tools`;
        const instructions = s.instructions
          ? ` Instructions: ${s.instructions.replace(/\s+/g, " ").slice(0, 4096)}`
          : "";
        return `- ${s.name} (${s.access}, ${where}): ${s.description.replace(/\s+/g, " ").slice(0, 1024)}${instructions}`;
      });
      parts.push(
        [
          "# Memory stores",
          "",
          "You have these memory stores; what you save there outlives this session.",
          "",
          ...lines,
        ].join("\n"),
      );
    }
    const text = parts.filter((p): p is string => p !== null).join("\n\n");
    return text === "" ? null : text;
  }

  /**
   * Resolves the run's resources once and makes them available the way the run can have them.
   * `failed`: the run was ended with a clear error (committed); `lost`: the claim is gone.
   */
  async realize(): Promise<"ok" | "lost" | "failed"> {
    const port = this.run.ports.resources;
    if (!port || nothingToResolve(this.run.activation)) return "ok";
    const config = this.run.environment();
    this.mode = config.type === "cloud" && sandboxTierOf(config) !== "none" ? "mounted" : "tools";
    try {
      const { resources, skills } = await port.resolve(this.claim);
      if (resources.length === 0 && skills.length === 0) return "ok";
      this.resources = resources;
      this.skills = skills;
      if (this.mode === "mounted") await this.materialize();
      else this.offerTools();
    } catch (error) {
      if (error instanceof ResourceClaimLostError || this.run.signal.aborted) return "lost";
      // What the resources are (a file or skill version deleted since, a store no longer mounted)
      // ends the run, saying why. Anything else (the database or the coordinator unreachable, a
      // full disk) is this attempt's: it throws, the lease lapses and the run is claimed again.
      if (!isRefusal(error)) throw error;
      return this.fail(error.message);
    }
    // The run's id: what each run saw is read back per run (the session's resource usage).
    const fact = resourcesRealized(this.run.ports.clock.now(), {
      run_id: this.run.activation.runId,
      ...realizedBody(this.mode, this.resources, this.skills),
    });
    return (await this.run.commitLanding([fact])) === "ok" ? "ok" : "lost";
  }

  /**
   * Writes back every read-write store mounted as a directory, under the claim. Returns the notes
   * the agent must read (changes that did not take) and the fact that records the outcomes; `lost`
   * when the claim is gone (nothing was written).
   */
  async writeBack(
    toldIn: "tool_result" | "next_request",
  ): Promise<{ notes: string[]; fact: TypedFact | null } | "lost"> {
    const port = this.run.ports.resources;
    if (!port || this.memory.length === 0) return { notes: [], fact: null };
    if (this.run.signal.aborted) return "lost";
    const notes: string[] = [];
    const recorded: JsonObject[] = [];
    for (const store of this.memory) {
      let outcomes: MemoryChangeOutcome[];
      try {
        outcomes = await store.writeBack(port, this.claim);
      } catch (error) {
        if (error instanceof ResourceClaimLostError || this.run.signal.aborted) return "lost";
        const message = error instanceof Error ? error.message : String(error);
        this.run.ports.log.warn(
          { runId: this.run.activation.runId, error: message },
          "memory write-back failed",
        );
        notes.push(
          `Changes under ${store.mountPath} could not be saved yet (${message}); they are kept and retried.`,
        );
        continue;
      }
      notes.push(...writeBackNotes(store.mountPath, outcomes));
      for (const o of outcomes)
        recorded.push({
          memory_store_id: store.memoryStoreId,
          path: o.path,
          outcome: o.outcome,
          ...(o.outcome === "written" || o.outcome === "deleted"
            ? { memory_id: o.memoryId, version_id: o.versionId }
            : {}),
          ...(o.outcome === "conflict" || o.outcome === "refused" ? { reason: o.reason } : {}),
        });
    }
    return {
      notes,
      fact:
        recorded.length === 0
          ? null
          : memoryWrittenBack(this.run.ports.clock.now(), recorded, notes, toldIn, this.run.activation.runId),
    };
  }

  private offerTools(): void {
    // Admission refuses these; a revision changed under a running session is refused here too.
    if (this.resources.some((r) => r.type === "file"))
      throw new RealizationRefused(
        "this session's file resources need a sandbox that mounts them, and this environment has none",
      );
    const port = this.run.ports.resources;
    if (!port) return;
    const claim = this.claim;
    if (this.skills.length > 0)
      addRuntimeTools(
        this.catalog,
        skillTools(this.skills, (digest) => port.readBlob(claim, digest)),
      );
    const stores = this.resources.filter((r) => r.type === "memory_store");
    if (stores.length > 0) addRuntimeTools(this.catalog, memoryTools(stores, port, claim));
  }

  /** Writes every mounted resource's content on the host, as the run's claim reads it. */
  private async materialize(): Promise<void> {
    const port = this.run.ports.resources;
    const area = this.run.ports.mountArea;
    if (!port) return;
    const plan = planMounts(this.resources, this.skills);
    if (plan.length === 0) return;
    if (area === undefined)
      throw new RealizationRefused("this worker has no area to mount session resources in");
    const sessionId = this.run.activation.sessionId;
    if (!SEGMENT.test(sessionId)) throw new RealizationRefused("the session id is not a plain id");
    const root = `${area}/${sessionId}`;
    await ensureDirectory(area, 0o700);
    await ensureDirectory(root, 0o755);
    await ensureDirectory(`${root}/files`, 0o755);
    await ensureDirectory(`${root}/skills`, 0o755);
    await ensureDirectory(`${root}/memory`, 0o755);
    const claim = this.claim;
    for (const { mount, content } of plan) {
      const host = `${root}/${mount.hostPath}`;
      if (content.kind === "file") {
        const bytes = await port.readBlob(claim, content.resource.digest);
        if (bytes === null)
          throw new RealizationRefused(`the file ${content.resource.fileId} is not available`);
        await writeReadOnly(host, bytes);
      } else if (content.kind === "skill") {
        for (const file of content.skill.files) {
          const path = safeRelativePath(file.path);
          if (path === null)
            throw new RealizationRefused(`skill ${content.skill.name} has a file outside its directory`);
          const bytes = await port.readBlob(claim, file.digest);
          if (bytes === null)
            throw new RealizationRefused(`skill ${content.skill.name}'s ${path} is not available`);
          await writeReadOnly(`${host}/${path}`, bytes);
        }
      } else {
        const snapshot = await port.memorySnapshot(claim, content.resource.memoryStoreId);
        // A directory the sandbox may have written into since the last snapshot (a run that died
        // before its write-back): what it holds now is the store's, nothing of the old run's. Files
        // this process wrote or read there, untouched since and equal to the snapshot, are kept.
        const files = snapshot.flatMap((entry) => {
          const path = safeRelativePath(entry.path);
          return path === null ? [] : [{ path, content: entry.content, sha256: entry.contentSha256 }];
        });
        const known = knownFilesOf(host);
        const held = await syncMountTree(
          host,
          files,
          known,
          mount.readOnly ? 0o644 : 0o600,
          mount.readOnly ? 0o755 : 0o700,
        );
        known.clear();
        for (const [path, file] of held) known.set(path, file);
        if (!mount.readOnly) {
          const store = new MountedMemoryStore(
            content.resource.memoryStoreId,
            content.resource.mountPath,
            host,
            snapshot,
            known,
          );
          this.memory.push(store);
        }
      }
    }
    this.mountSet = { hostRoot: root, entries: plan.map((p) => p.mount) };
  }

  private async fail(message: string): Promise<"failed" | "lost"> {
    const now = this.run.ports.clock.now();
    const status = await this.run.commitLanding(
      [
        sessionError(
          now,
          "unknown_error",
          `the session's resources could not be made available: ${message}`,
          "terminal",
        ),
        idle(now, { kind: "retries_exhausted" }),
      ],
      "failed",
    );
    return status === "ok" ? "failed" : "lost";
  }
}

/** The session's resources cannot be realized as they stand: another attempt would not help. */
class RealizationRefused extends Error {
  override name = "RealizationRefused";
}

function isRefusal(error: unknown): error is Error {
  return error instanceof RealizationRefused || (error instanceof AwakenError && !error.retryable);
}

async function ensureDirectory(path: string, mode: number): Promise<void> {
  await mkdir(path, { recursive: true, mode });
}

/** Content the sandbox reads but never writes: the worker's, readable by everyone it is bound for. */
async function writeReadOnly(path: string, bytes: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  // In place (same inode): a live sandbox keeps seeing a bound file that is rewritten.
  await writeFile(path, bytes, { mode: 0o644 });
  await chmod(path, 0o644);
}

/**
 * The claim saw no resource on the session and the agent pins no custom skill (the only kind this
 * server stores): asking would read nothing, so the run does not ask.
 */
function nothingToResolve(activation: Activation): boolean {
  return (
    activation.sessionHasResources === false &&
    !(activation.agent.definition.skills ?? []).some((skill) => skill.type === "custom")
  );
}
