import { isoTime } from "../../kernel/clock.js";
import type { SessionResourceRecord } from "../../resources/ports.js";

/**
 * A session resource on the wire (`BetaManagedAgentsSessionResource`). A repository's token is
 * never part of it (not even whether one is set); a memory store resource has no id of its own.
 */
export function sessionResourceDto(r: SessionResourceRecord): Record<string, unknown> {
  switch (r.type) {
    case "file":
      return {
        id: r.id,
        type: "file",
        file_id: r.fileId,
        mount_path: r.mountPath,
        created_at: isoTime(r.createdAt),
        updated_at: isoTime(r.updatedAt),
      };
    case "memory_store":
      return {
        type: "memory_store",
        memory_store_id: r.memoryStoreId,
        access: r.access,
        name: r.name,
        description: r.description,
        instructions: r.instructions,
        mount_path: r.mountPath,
      };
    case "github_repository":
      return {
        id: r.id,
        type: "github_repository",
        url: r.url,
        checkout: r.checkout,
        mount_path: r.mountPath,
        created_at: isoTime(r.createdAt),
        updated_at: isoTime(r.updatedAt),
      };
  }
}
