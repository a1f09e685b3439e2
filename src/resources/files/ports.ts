import type { Page } from "../../kernel/pagination.js";
import type { BlobDigest, BlobReferences } from "../ports.js";

/** A file's metadata; its bytes are the blob `digest` names. */
export interface FileRecord {
  id: string;
  workspaceId: string;
  /** The final path component of the name the client sent (or `unnamed…`). */
  filename: string;
  mimeType: string;
  sizeBytes: number;
  digest: BlobDigest;
  createdAt: number;
  /** Whether its bytes may be downloaded through the API (uploads: yes). */
  downloadable: boolean;
  /** The resource the file is scoped to (a session id), or null. */
  scopeId: string | null;
  /** When its bytes stop being available, or null: never. */
  expiresAt: number | null;
}

export interface FileListQuery {
  limit: number;
  cursor: string | null;
  scopeId: string | null;
}

/** A create's outcome: written, or refused by the quota (nothing written) with the bytes in use. */
export type FileCreateOutcome = { created: true } | { created: false; usedBytes: number };

/** The File family's store port (its SQL implementation lives in stores/sql). */
export interface FileStore extends BlobReferences {
  readonly family: "files";
  /**
   * Inserts the file when the workspace's files, with it, stay within `quotaBytes` (checked and
   * written under one workspace lock, so concurrent uploads cannot overshoot together). When they
   * would not, nothing is written and the bytes already used are returned.
   */
  create(
    record: FileRecord,
    quotaBytes: number,
  ): Promise<{ created: true } | { created: false; usedBytes: number }>;
  /** The file of this workspace, or null (another workspace's id is null too). */
  get(workspaceId: string, fileId: string): Promise<FileRecord | null>;
  /** Newest first. */
  list(workspaceId: string, query: FileListQuery): Promise<Page<FileRecord>>;
  /** The workspace's files among `ids`, newest first; unknown ids are left out. */
  listByIds(workspaceId: string, ids: readonly string[], scopeId: string | null): Promise<FileRecord[]>;
  /** Removes the file and returns what it was, or null when this workspace has no such file. */
  delete(workspaceId: string, fileId: string): Promise<FileRecord | null>;
  /**
   * Whether any file (of any workspace) still names this blob. A blob is deleted only when no row
   * of any family references it: each family that keeps blobs answers this for its own rows.
   */
  references(digest: BlobDigest): Promise<boolean>;
}
