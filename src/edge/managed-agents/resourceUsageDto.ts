import type { CommittedFact } from "../../coordinator/facts.js";
import { isoTime } from "../../kernel/clock.js";
import type { JsonObject, JsonValue } from "../../kernel/json.js";

/**
 * What one run saw of its session's resources, read back from the history: the realization the
 * run committed at its start and the memory write-backs committed after it. Every field is copied
 * by name from the recorded bodies (never spread), so nothing the record does not promise, and
 * never a token, can reach a client.
 */
export interface RunResourceUsage {
  type: "run_resource_usage";
  /** Null only for a record written before realizations carried their run. */
  run_id: string | null;
  realized_at: string;
  mode: string;
  resources: JsonObject[];
  skills: JsonObject[];
  memory_write_backs: Array<{ at: string; told_in: string | null; outcomes: JsonObject[] }>;
}

/**
 * The internal facts a run's usage is read from, as the runtime names them (`runtime/toolFacts.ts`,
 * which an edge may not import; a test holds the two in step).
 */
export const RESOURCES_REALIZED_TYPE = "awaken.resources_realized";
export const MEMORY_WRITTEN_BACK_TYPE = "awaken.memory_written_back";

const str = (value: JsonValue | undefined): string | null => (typeof value === "string" ? value : null);
const num = (value: JsonValue | undefined): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;
const objects = (value: JsonValue | undefined): JsonObject[] =>
  Array.isArray(value)
    ? value.filter((v): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v))
    : [];

/** The named fields of `body` whose values are strings, numbers or booleans; absent ones left out. */
function pick(body: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) {
    const value = Object.hasOwn(body, key) ? body[key] : undefined;
    if (typeof value === "string" || typeof value === "boolean" || num(value) !== null) out[key] = value!;
  }
  return out;
}

function resourceDto(r: JsonObject): JsonObject {
  switch (r.type) {
    case "file":
      return pick(r, ["type", "id", "file_id", "mount_path", "digest", "size_bytes"]);
    case "memory_store":
      return pick(r, ["type", "memory_store_id", "mount_path", "access"]);
    default: {
      const checkout =
        typeof r.checkout === "object" && r.checkout !== null && !Array.isArray(r.checkout)
          ? pick(r.checkout, ["type", "name", "sha"])
          : null;
      return { ...pick(r, ["type", "id", "mount_path", "has_token"]), checkout };
    }
  }
}

const skillDto = (s: JsonObject): JsonObject => pick(s, ["skill_id", "version", "name", "path"]);

const outcomeDto = (o: JsonObject): JsonObject =>
  pick(o, ["memory_store_id", "path", "outcome", "memory_id", "version_id", "reason"]);

/** A realization's record, with no write-backs yet. */
export function realizationUsage(fact: CommittedFact): RunResourceUsage {
  const body = fact.body;
  return {
    type: "run_resource_usage",
    run_id: str(body.run_id),
    realized_at: isoTime(fact.createdAt),
    mode: str(body.mode) ?? "tools",
    resources: objects(body.resources).map(resourceDto),
    skills: objects(body.skills).map(skillDto),
    memory_write_backs: [],
  };
}

/** A write-back's record, as it is listed under the run it belongs to. */
export function writeBackUsage(fact: CommittedFact): RunResourceUsage["memory_write_backs"][number] {
  return {
    at: isoTime(fact.createdAt),
    told_in: str(fact.body.told_in),
    outcomes: objects(fact.body.outcomes).map(outcomeDto),
  };
}
