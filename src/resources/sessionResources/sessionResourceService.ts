import { AwakenError, invalid, notFound } from "../../kernel/errors.js";
import { newId } from "../../kernel/ids.js";
import type { Page } from "../../kernel/pagination.js";
import { decodeSealedText, encodeSealedText } from "../../secrets/sealedText.js";
import type { FileRecord } from "../files/ports.js";
import type {
  RunResource,
  SessionResourcePreparer,
  SessionResourceRecord,
  SessionResourceRequest,
  TokenSealer,
} from "../ports.js";
import type { ResourceDeps } from "../services.js";
import {
  checkMountPath,
  defaultFileMount,
  defaultMemoryMount,
  defaultRepositoryMount,
  mountsOverlap,
} from "./mountPaths.js";
import { checkCheckout, checkRepositoryUrl, checkToken } from "./repositoryRules.js";
import { tokenIdentity } from "./sealedToken.js";

/** Default bound on resources per session; `AWAKEN_SESSION_RESOURCES_MAX` changes it. */
export const DEFAULT_MAX_SESSION_RESOURCES = 64;

/**
 * The resources a session mounts: files, memory stores and repositories, one row each, the one
 * truth the session's `resources` and every run read. A change (an add, a delete, a token's
 * rotation) reaches a live session at its next run's realization: a run that already resolved its
 * resources keeps what it saw. A repository's token is sealed at rest and opened only for a clone.
 */
export class SessionResourceService implements SessionResourcePreparer {
  private readonly maxPerSession: number;

  constructor(protected readonly deps: ResourceDeps) {
    this.maxPerSession = positiveInt(deps.env.AWAKEN_SESSION_RESOURCES_MAX) ?? DEFAULT_MAX_SESSION_RESOURCES;
  }

  private get store() {
    return this.deps.stores.sessionResources;
  }

  /** Validates and seals a new session's resources; the session store writes them with the session. */
  async prepare(
    workspaceId: string,
    sessionId: string,
    requested: readonly SessionResourceRequest[],
    now: number,
  ): Promise<SessionResourceRecord[]> {
    if (requested.length > this.maxPerSession)
      throw invalid(`resources: a session mounts at most ${this.maxPerSession} resources`);
    const records: SessionResourceRecord[] = [];
    for (const [index, request] of requested.entries()) {
      const record = await this.build(workspaceId, sessionId, request, now, `resources[${index}]`, records);
      checkFits(records, record, `resources[${index}]`);
      records.push(record);
    }
    return records;
  }

  /** Adds a file to a live session (the SDK's `add` takes files only). */
  async add(
    workspaceId: string,
    sessionId: string,
    request: Extract<SessionResourceRequest, { type: "file" }>,
  ): Promise<SessionResourceRecord> {
    if (!(await this.store.sessionExists(workspaceId, sessionId))) throw notFound("session", sessionId);
    const now = this.deps.clock.now();
    const record = await this.build(workspaceId, sessionId, request, now, "body", []);
    const added = await this.store.add(record, (existing) => {
      if (existing.length >= this.maxPerSession)
        throw invalid(`the session already mounts ${existing.length} resources, the most a session may`);
      checkFits(existing, record, "body");
    });
    if (!added) throw notFound("session", sessionId);
    return record;
  }

  async get(workspaceId: string, sessionId: string, id: string): Promise<SessionResourceRecord> {
    await this.sessionOf(workspaceId, sessionId);
    // A memory store resource has no id of its own on the wire: its store's id names it.
    const found = id.startsWith("memstore_")
      ? await this.store.getByMemoryStore(workspaceId, sessionId, id)
      : await this.store.get(workspaceId, sessionId, id);
    if (!found) throw notFound("session resource", id);
    return found;
  }

  async list(
    workspaceId: string,
    sessionId: string,
    query: { limit: number; cursor: string | null },
  ): Promise<Page<SessionResourceRecord>> {
    await this.sessionOf(workspaceId, sessionId);
    return this.store.list(workspaceId, sessionId, query);
  }

  /** Every resource of each session named (the sessions' `resources` on the wire). */
  listForSessions(
    workspaceId: string,
    sessionIds: readonly string[],
  ): Promise<Map<string, SessionResourceRecord[]>> {
    return this.store.listAll(workspaceId, sessionIds);
  }

  /** Rotates a repository's token (the only update the SDK has); other types are refused. */
  async update(
    workspaceId: string,
    sessionId: string,
    id: string,
    authorizationToken: string,
  ): Promise<SessionResourceRecord> {
    const current = await this.get(workspaceId, sessionId, id);
    if (current.type !== "github_repository") {
      throw invalid(
        `authorization_token: only github_repository resources have a token to rotate; this one is a ${current.type}`,
      );
    }
    checkToken(authorizationToken, "authorization_token");
    const now = this.deps.clock.now();
    const revision = current.tokenRevision + 1;
    const sealed = await this.seal(
      workspaceId,
      current.id,
      revision,
      authorizationToken,
      "authorization_token",
    );
    if (!(await this.store.rotateToken(workspaceId, sessionId, current.id, sealed, revision, now))) {
      throw new AwakenError(
        "version_mismatch",
        `session resource ${current.id} changed while its token was rotated (deleted, or rotated by another request); read it and retry`,
      );
    }
    return this.get(workspaceId, sessionId, current.id);
  }

  async delete(workspaceId: string, sessionId: string, id: string): Promise<SessionResourceRecord> {
    const current = await this.get(workspaceId, sessionId, id);
    if (!(await this.store.delete(workspaceId, sessionId, current.id)))
      throw notFound("session resource", id);
    return current;
  }

  /**
   * The session's resources as a run realizes them: files with their blob's facts, memory stores
   * with their attachment, repositories without their token. A file deleted since it was attached
   * is left out (its mount would have nothing to show).
   */
  async listForRun(workspaceId: string, sessionId: string): Promise<RunResource[]> {
    return this.forRun(
      workspaceId,
      (await this.store.listAll(workspaceId, [sessionId])).get(sessionId) ?? [],
    );
  }

  /** `listForRun` for records already read (the claim check reads them with the run). */
  async forRun(workspaceId: string, records: readonly SessionResourceRecord[]): Promise<RunResource[]> {
    const files = this.deps.stores.files;
    const out: RunResource[] = [];
    for (const r of records) {
      if (r.type === "file") {
        const file = await files.get(workspaceId, r.fileId);
        if (file)
          out.push({ type: "file", id: r.id, fileId: r.fileId, mountPath: r.mountPath, ...fileFields(file) });
      } else if (r.type === "memory_store") {
        out.push({
          type: "memory_store",
          memoryStoreId: r.memoryStoreId,
          mountPath: r.mountPath,
          access: r.access,
          name: r.name,
          description: r.description,
          instructions: r.instructions,
        });
      } else {
        out.push({
          type: "github_repository",
          id: r.id,
          url: r.url,
          mountPath: r.mountPath,
          checkout: r.checkout,
          hasToken: r.sealedToken !== null,
        });
      }
    }
    return out;
  }

  /** A repository's token opened for one clone (the caller zeroes it); null: none, or it does not open. */
  async openRepositoryToken(
    workspaceId: string,
    sessionId: string,
    resourceId: string,
  ): Promise<Buffer | null> {
    const r = await this.store.get(workspaceId, sessionId, resourceId);
    if (r?.type !== "github_repository" || r.sealedToken === null || !this.deps.sealer) return null;
    const sealed = decodeSealedText(r.sealedToken);
    if (!sealed) return null;
    return this.deps.sealer
      .openField(tokenIdentity(workspaceId, r.id, r.tokenRevision), sealed, "token")
      .catch(() => null);
  }

  private async sessionOf(workspaceId: string, sessionId: string): Promise<void> {
    if (!(await this.store.sessionExists(workspaceId, sessionId))) throw notFound("session", sessionId);
  }

  private async build(
    workspaceId: string,
    sessionId: string,
    request: SessionResourceRequest,
    now: number,
    field: string,
    siblings: readonly SessionResourceRecord[],
  ): Promise<SessionResourceRecord> {
    const id = newId("sesrsc", now);
    const base = { id, workspaceId, sessionId, createdAt: now, updatedAt: now };
    switch (request.type) {
      case "file": {
        // Another workspace's file is not found, exactly as an unknown id is.
        const file = await this.deps.stores.files.get(workspaceId, request.fileId);
        if (!file || (file.expiresAt !== null && file.expiresAt <= now))
          throw notFound("file", request.fileId);
        const mountPath = checkMountPath(
          request.mountPath ?? defaultFileMount(request.fileId),
          `${field}.mount_path`,
        );
        return { ...base, type: "file", fileId: request.fileId, mountPath };
      }
      case "memory_store": {
        const store = await this.deps.stores.memory.getStore(workspaceId, request.memoryStoreId);
        if (!store) throw notFound("memory store", request.memoryStoreId);
        if (store.archivedAt !== null)
          throw invalid(
            `${field}.memory_store_id: memory store ${store.id} is archived and cannot be attached`,
          );
        if (siblings.some((s) => s.type === "memory_store" && s.memoryStoreId === store.id))
          throw invalid(
            `${field}.memory_store_id: memory store ${store.id} is attached to this session twice`,
          );
        return {
          ...base,
          type: "memory_store",
          memoryStoreId: store.id,
          access: request.access ?? "read_write",
          name: store.name,
          description: store.description,
          instructions: request.instructions,
          mountPath: memoryMount(store.name, store.id, siblings),
        };
      }
      case "github_repository": {
        const repoName = await checkRepositoryUrl(request.url, this.deps.outbound, `${field}.url`);
        if (request.checkout) checkCheckout(request.checkout, `${field}.checkout`);
        const mountPath = checkMountPath(
          request.mountPath ?? defaultRepositoryMount(repoName),
          `${field}.mount_path`,
        );
        let sealedToken: string | null = null;
        if (request.authorizationToken !== null) {
          checkToken(request.authorizationToken, `${field}.authorization_token`);
          sealedToken = await this.seal(
            workspaceId,
            id,
            1,
            request.authorizationToken,
            `${field}.authorization_token`,
          );
        }
        return {
          ...base,
          type: "github_repository",
          url: request.url,
          checkout: request.checkout,
          mountPath,
          sealedToken,
          tokenRevision: 1,
        };
      }
    }
  }

  private async seal(
    workspaceId: string,
    resourceId: string,
    revision: number,
    token: string,
    field: string,
  ): Promise<string> {
    const sealer: TokenSealer | undefined = this.deps.sealer;
    if (!sealer) {
      throw invalid(
        `${field}: this server cannot keep repository tokens (no sealer is configured); attach the repository without a token, or use a server whose Control holds the master key`,
      );
    }
    const { sealed } = await sealer.seal(tokenIdentity(workspaceId, resourceId, revision), { token });
    return encodeSealedText(sealed);
  }
}

/** A new mount must not overlap any other of the session (neither the same path nor inside one). */
function checkFits(
  existing: readonly SessionResourceRecord[],
  record: SessionResourceRecord,
  field: string,
): void {
  const clash = existing.find((e) => mountsOverlap(e.mountPath, record.mountPath));
  if (!clash) return;
  const what =
    clash.mountPath === record.mountPath ? "is already the mount path of" : "overlaps the mount path of";
  throw invalid(
    `${field}: mount path ${JSON.stringify(record.mountPath)} ${what} another resource of this session (${JSON.stringify(clash.mountPath)}); choose another mount_path`,
  );
}

/**
 * `/mnt/memory/<name>` as the SDK documents it: lower-cased, every run of characters other than
 * ASCII letters and digits one hyphen. A second store whose name gives the same path gets `-2`, `-3`…
 */
function memoryMount(name: string, storeId: string, siblings: readonly SessionResourceRecord[]): string {
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 100)
      .replace(/-+$/, "") || storeId;
  for (let n = 1; ; n++) {
    const path = defaultMemoryMount(n === 1 ? slug : `${slug}-${n}`);
    if (!siblings.some((s) => mountsOverlap(s.mountPath, path))) return path;
  }
}

function fileFields(file: FileRecord) {
  return { filename: file.filename, mimeType: file.mimeType, sizeBytes: file.sizeBytes, digest: file.digest };
}

/** The limit from the environment; a value that is not a whole number 1-100000 stops start-up. */
function positiveInt(text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(text) || Number(text) > 100_000)
    throw new Error(
      `AWAKEN_SESSION_RESOURCES_MAX must be a whole number from 1 to 100000 (got ${JSON.stringify(text)})`,
    );
  return Number(text);
}
