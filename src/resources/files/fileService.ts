import { AwakenError, invalid, notFound } from "../../kernel/errors.js";
import { newId } from "../../kernel/ids.js";
import type { Page } from "../../kernel/pagination.js";
import { blobOwners, deleteBlobIfUnreferenced } from "../blobs/blobCollection.js";
import type { ResourceDeps } from "../services.js";
import { type FileLimits, fileLimitsFromEnv } from "./fileLimits.js";
import { mimeTypeOf } from "./mimeType.js";
import type { FileCreateOutcome, FileRecord } from "./ports.js";

export interface FileUpload {
  /** The final path component of the client's filename ("" when it sent none). */
  filename: string;
  /** The content type the client declared for the part (untrusted). */
  declaredType: string | undefined;
  bytes: Buffer;
  /** Seconds until the bytes expire (3600 to 7776000), or null: never. */
  expiresInSeconds: number | null;
  /** The resource the file belongs to (a session), or null. */
  scopeId: string | null;
}

export const EXPIRES_IN_SECONDS = { min: 3600, max: 7_776_000 } as const;
const MAX_FILENAME_BYTES = 255;

/**
 * Files: uploads kept as content-addressed blobs with a metadata row per workspace. Every lookup
 * is by workspace and id, so another workspace's id is "not found", never "forbidden".
 */
export class FileService {
  readonly limits: FileLimits;

  constructor(protected readonly deps: ResourceDeps) {
    // Read at composition: a malformed limit stops start-up with the variable's name.
    this.limits = fileLimitsFromEnv(deps.env);
  }

  async upload(workspaceId: string, upload: FileUpload): Promise<FileRecord> {
    const { bytes } = upload;
    if (bytes.length === 0) throw invalid("file: the file is empty; send at least one byte");
    if (bytes.length > this.limits.maxFileBytes) {
      throw new AwakenError(
        "payload_too_large",
        `file: ${bytes.length} bytes exceeds the maximum file size of ${this.limits.maxFileBytes} bytes (AWAKEN_FILE_MAX_BYTES).`,
      );
    }
    checkFilename(upload.filename);
    const expires = checkExpiry(upload.expiresInSeconds);
    const { mimeType, extension } = await mimeTypeOf(bytes, upload.filename, upload.declaredType);
    const filename = upload.filename !== "" ? upload.filename : `unnamed${extension ? `.${extension}` : ""}`;
    const now = this.deps.clock.now();
    const { digest } = await this.deps.blobs.put(bytes);
    const record: FileRecord = {
      id: newId("file", now),
      workspaceId,
      filename,
      mimeType,
      sizeBytes: bytes.length,
      digest,
      createdAt: now,
      // Uploaded by a user: the user may have the bytes back.
      downloadable: true,
      scopeId: upload.scopeId,
      expiresAt: expires === null ? null : now + expires * 1000,
    };
    let outcome: FileCreateOutcome;
    try {
      outcome = await this.deps.stores.files.create(record, this.limits.workspaceMaxBytes);
    } catch (error) {
      await this.forgetBlob(digest);
      throw error;
    }
    if (!outcome.created) {
      await this.forgetBlob(digest);
      throw quotaExceeded(this.limits.workspaceMaxBytes, outcome.usedBytes, bytes.length);
    }
    // A delete of another file with the same bytes may have removed the blob between the put and
    // the row: the row now references it, so it is put back.
    if (!(await this.deps.blobs.has(digest))) await this.deps.blobs.put(bytes);
    return record;
  }

  async get(workspaceId: string, fileId: string): Promise<FileRecord> {
    const record = await this.deps.stores.files.get(workspaceId, fileId);
    if (!record) throw notFound("file", fileId);
    return record;
  }

  list(
    workspaceId: string,
    query: { limit: number; cursor: string | null; scopeId: string | null },
  ): Promise<Page<FileRecord>> {
    return this.deps.stores.files.list(workspaceId, query);
  }

  async listByIds(
    workspaceId: string,
    ids: readonly string[],
    scopeId: string | null,
  ): Promise<Page<FileRecord>> {
    return { data: await this.deps.stores.files.listByIds(workspaceId, ids, scopeId), nextCursor: null };
  }

  /** The file and its bytes, when it may be downloaded and has not expired. */
  async download(workspaceId: string, fileId: string): Promise<{ record: FileRecord; bytes: Buffer }> {
    const record = await this.get(workspaceId, fileId);
    if (!record.downloadable) {
      throw new AwakenError("file_not_downloadable", `file ${JSON.stringify(fileId)} is not downloadable.`);
    }
    if (record.expiresAt !== null && record.expiresAt <= this.deps.clock.now()) {
      throw new AwakenError(
        "file_expired",
        `file ${JSON.stringify(fileId)} has expired; its content is no longer available.`,
      );
    }
    const bytes = await this.deps.blobs.get(record.digest);
    // The row outlived its bytes (deleted concurrently): as gone as the file.
    if (!bytes) throw notFound("file", fileId);
    return { record, bytes };
  }

  async delete(workspaceId: string, fileId: string): Promise<void> {
    const record = await this.deps.stores.files.delete(workspaceId, fileId);
    if (!record) throw notFound("file", fileId);
    await this.forgetBlob(record.digest);
  }

  /** Deletes the blob unless a row of any family still references it. */
  private async forgetBlob(digest: string): Promise<void> {
    await deleteBlobIfUnreferenced(this.deps.blobs, blobOwners(this.deps.stores), digest);
  }
}

/** The service's own check of a name the edge already checked: a final component, bounded. */
function checkFilename(filename: string): void {
  if (
    filename.includes("/") ||
    filename.includes("\\") ||
    filename.includes("\0") ||
    filename === "." ||
    filename === ".."
  ) {
    throw invalid(`file: filename ${JSON.stringify(filename.slice(0, 80))} must be a plain file name`);
  }
  if (Buffer.byteLength(filename, "utf8") > MAX_FILENAME_BYTES) {
    throw invalid(`file: filename is longer than ${MAX_FILENAME_BYTES} bytes`);
  }
}

function checkExpiry(seconds: number | null): number | null {
  const { min, max } = EXPIRES_IN_SECONDS;
  if (seconds !== null && (!Number.isSafeInteger(seconds) || seconds < min || seconds > max)) {
    throw invalid(`expires_in_seconds: expected an integer between ${min} and ${max}`);
  }
  return seconds;
}

function quotaExceeded(quotaBytes: number, usedBytes: number, sizeBytes: number): AwakenError {
  return new AwakenError(
    "storage_quota_exceeded",
    `The workspace's file storage quota of ${quotaBytes} bytes (AWAKEN_WORKSPACE_FILES_MAX_BYTES) would be exceeded: ${usedBytes} bytes are used and this file has ${sizeBytes}. Delete files to free space, then retry.`,
    { details: { quota_bytes: quotaBytes, used_bytes: usedBytes } },
  );
}
