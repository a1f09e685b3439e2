import { isoTime } from "../../kernel/clock.js";
import type { FileRecord } from "../../resources/files/ports.js";

/** A file's metadata on the wire (`FileMetadata` / `BetaFileMetadata`). */
export function fileDto(f: FileRecord): Record<string, unknown> {
  return {
    id: f.id,
    type: "file",
    filename: f.filename,
    mime_type: f.mimeType,
    size_bytes: f.sizeBytes,
    created_at: isoTime(f.createdAt),
    downloadable: f.downloadable,
    expires_at: f.expiresAt === null ? null : isoTime(f.expiresAt),
    scope: f.scopeId === null ? null : { id: f.scopeId, type: "session" },
  };
}

/**
 * `content-disposition` for a download: always an attachment (never rendered by a browser on the
 * API's origin), an ASCII fallback name and the exact name as RFC 8187 `filename*`.
 */
export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(/[^A-Za-z0-9._ -]/g, "_").slice(0, 255) || "file";
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
