/**
 * Memory stores without a sandbox: the runtime serves them as tools with the mounted form's rules.
 * Each call reads the store under the run's claim; a write or delete of an existing memory applies
 * only to the content the agent read of it (the same precondition the write-back of a mounted
 * directory uses), so a memory someone else changed meanwhile is a conflict, never overwritten.
 * What the agent read is this run's memory_read, or the `expected_sha256` it names (memory_read
 * shows it), which holds across turns and workers. A read-only store takes no write at all.
 */
import type {
  MemoryChange,
  MemoryChangeOutcome,
  ResourceClaim,
  RunResource,
  RunResources,
} from "../resources/ports.js";
import { MAX_TOOL_OUTPUT_BYTES } from "./hand/index.js";
import type { RuntimeTool } from "./toolCatalog.js";

type MemoryResource = Extract<RunResource, { type: "memory_store" }>;

const STORE_PROPERTY = {
  type: "string",
  description: "The memory store's name (may be omitted when you have only one).",
} as const;

const EXPECTED_PROPERTY = {
  type: "string",
  description: "The content_sha256 memory_read showed; default: what you read of it in this turn.",
} as const;

export function memoryTools(
  stores: readonly MemoryResource[],
  resources: RunResources,
  claim: ResourceClaim,
): RuntimeTool[] {
  /** What the agent last read of each memory, by store and path: the precondition of its writes. */
  const read = new Map<string, { memoryId: string; sha: string }>();
  const key = (store: MemoryResource, path: string) => `${store.memoryStoreId}\n${path}`;

  const storeOf = (input: Record<string, unknown>): MemoryResource | string => {
    const name = input.store;
    if (name === undefined) {
      if (stores.length === 1 && stores[0]) return stores[0];
      return `name the store: one of ${stores.map((s) => JSON.stringify(s.name)).join(", ")}`;
    }
    if (typeof name !== "string") return "store must be a string";
    return (
      stores.find((s) => s.name === name) ?? `no memory store is named ${JSON.stringify(name.slice(0, 200))}`
    );
  };
  const pathOf = (input: Record<string, unknown>): string | null => {
    const path = input.path;
    if (typeof path !== "string" || path === "") return null;
    return path.startsWith("/") ? path.slice(1) : path;
  };
  const fail = (tool: string, message: string) => ({ text: `${tool}: ${message}`, isError: true });

  const memoryList: RuntimeTool = {
    spec: {
      name: "memory_list",
      description: "Lists your memory stores, or the memories (paths and sizes) of one store.",
      input_schema: { type: "object", properties: { store: STORE_PROPERTY }, additionalProperties: false },
    },
    repeatable: true,
    run: async (input) => {
      if (input.store === undefined && stores.length > 1)
        return {
          text: JSON.stringify(
            stores.map((s) => ({
              name: s.name,
              description: s.description,
              access: s.access,
              instructions: s.instructions,
            })),
            null,
            2,
          ),
          isError: false,
        };
      const store = storeOf(input);
      if (typeof store === "string") return fail("memory_list", store);
      const snapshot = await resources.memorySnapshot(claim, store.memoryStoreId);
      const listing = snapshot.map((m) => `${m.path} (${Buffer.byteLength(m.content)} bytes)`).join("\n");
      return { text: listing === "" ? "(no memories)" : listing, isError: false };
    },
  };

  const memoryRead: RuntimeTool = {
    spec: {
      name: "memory_read",
      description: "Reads one memory by its path in the store.",
      input_schema: {
        type: "object",
        properties: { store: STORE_PROPERTY, path: { type: "string" } },
        required: ["path"],
        additionalProperties: false,
      },
    },
    repeatable: true,
    run: async (input) => {
      const store = storeOf(input);
      if (typeof store === "string") return fail("memory_read", store);
      const path = pathOf(input);
      if (path === null) return fail("memory_read", "path is required (a non-empty string)");
      const memory = (await resources.memorySnapshot(claim, store.memoryStoreId)).find(
        (m) => m.path === path,
      );
      if (!memory) return fail("memory_read", `no memory at ${path}`);
      read.set(key(store, path), { memoryId: memory.memoryId, sha: memory.contentSha256 });
      const body =
        Buffer.byteLength(memory.content) > MAX_TOOL_OUTPUT_BYTES
          ? `${Buffer.from(memory.content).subarray(0, MAX_TOOL_OUTPUT_BYTES).toString("utf8")}\n[truncated]`
          : memory.content;
      return { text: `[${path} content_sha256 ${memory.contentSha256}]\n${body}`, isError: false };
    },
  };

  /** One change under the read precondition; the store decides, the agent is told what it did. */
  const change = async (
    tool: string,
    input: Record<string, unknown>,
    content: string | null,
  ): Promise<{ text: string; isError: boolean }> => {
    const store = storeOf(input);
    if (typeof store === "string") return fail(tool, store);
    if (store.access !== "read_write") return fail(tool, `the memory store ${store.name} is read-only`);
    const path = pathOf(input);
    if (path === null) return fail(tool, "path is required (a non-empty string)");
    const current = (await resources.memorySnapshot(claim, store.memoryStoreId)).find((m) => m.path === path);
    const named = input.expected_sha256;
    if (named !== undefined && (typeof named !== "string" || !/^[0-9a-f]{64}$/.test(named)))
      return fail(tool, "expected_sha256 must be 64 lowercase hex digits, as memory_read shows it");
    const seen =
      typeof named === "string" && current !== undefined
        ? { memoryId: current.memoryId, sha: named }
        : read.get(key(store, path));
    let request: MemoryChange;
    if (current === undefined) {
      if (content === null) return fail(tool, `no memory at ${path}`);
      request = { kind: "create", path, content };
    } else {
      if (seen === undefined || seen.memoryId !== current.memoryId)
        return fail(
          tool,
          `${path} exists: read it with memory_read first (or name its expected_sha256), then change it`,
        );
      request =
        content === null
          ? { kind: "delete", memoryId: seen.memoryId, path, expectedContentSha256: seen.sha }
          : { kind: "update", memoryId: seen.memoryId, path, content, expectedContentSha256: seen.sha };
    }
    const [outcome] = await resources.writeMemory(claim, store.memoryStoreId, [request]);
    return describe(tool, store, path, outcome);
  };

  const describe = (
    tool: string,
    store: MemoryResource,
    path: string,
    outcome: MemoryChangeOutcome | undefined,
  ): { text: string; isError: boolean } => {
    switch (outcome?.outcome) {
      case "written":
        read.set(key(store, path), { memoryId: outcome.memoryId, sha: outcome.contentSha256 });
        return { text: `saved ${path}`, isError: false };
      case "deleted":
        read.delete(key(store, path));
        return { text: `deleted ${path}`, isError: false };
      case "conflict":
        read.delete(key(store, path));
        return fail(
          tool,
          `${path} changed since you read it (${outcome.reason}); read it again before changing it`,
        );
      case "refused":
        return fail(tool, `${path} was refused: ${outcome.reason}`);
      default:
        return fail(tool, "the memory store gave no answer");
    }
  };

  const memoryWrite: RuntimeTool = {
    spec: {
      name: "memory_write",
      description:
        "Creates a memory, or replaces the content of one you have read (a memory changed since you read it is not overwritten).",
      input_schema: {
        type: "object",
        properties: {
          store: STORE_PROPERTY,
          path: { type: "string" },
          content: { type: "string" },
          expected_sha256: EXPECTED_PROPERTY,
        },
        required: ["path", "content"],
        additionalProperties: false,
      },
    },
    repeatable: false,
    run: async (input) => {
      if (typeof input.content !== "string") return fail("memory_write", "content is required (a string)");
      return change("memory_write", input, input.content);
    },
  };

  const memoryDelete: RuntimeTool = {
    spec: {
      name: "memory_delete",
      description: "Deletes a memory you have read (one changed since you read it is not deleted).",
      input_schema: {
        type: "object",
        properties: { store: STORE_PROPERTY, path: { type: "string" }, expected_sha256: EXPECTED_PROPERTY },
        required: ["path"],
        additionalProperties: false,
      },
    },
    repeatable: false,
    run: (input) => change("memory_delete", input, null),
  };

  return [memoryList, memoryRead, memoryWrite, memoryDelete];
}
