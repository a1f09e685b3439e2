/**
 * The wire of the remote worker's resource routes (`POST /v1/awaken/worker/resources/...`): every
 * `RunResources` call (resources/ports.ts) a run on a remote worker makes, naming the claim it
 * holds. The coordinator checks the claim live first (the credential routes' `checkClaim`) and
 * answers through the same in-process `RunResources` a run in its own process gets, so a remote
 * run sees exactly what a local one would: its session's resources, nothing of another session.
 *
 * Bytes (a blob, a repository token) cross as base64 in JSON: bounded sizes, one JSON document per
 * answer like every worker route. Objects are strict, so a field one side does not know is an error.
 */
import { z } from "zod";
import type {
  MemoryChange,
  MemoryChangeOutcome,
  MemorySnapshotEntry,
  ResourceClaim,
  RunResource,
  RunSkill,
} from "../resources/ports.js";
import { claimPart } from "./credentialWire.js";

/**
 * The largest blob one answer carries (a mounted file, a skill's file): 128 MiB of bytes, about
 * 171 MiB of base64 text, well under a JavaScript string's limit. A larger blob is refused with a
 * clear error instead of being sent.
 */
export const MAX_WIRE_BLOB_BYTES = 128 * 1024 * 1024;
/** The most changes one write-back carries (its body is also under the server's 32 MiB body limit). */
export const MAX_WIRE_MEMORY_CHANGES = 1_000;
/** Bounds of lists no schema of the families bounds more tightly; they only keep a body finite. */
const MAX_RESOURCES = 1_000;
const MAX_SKILLS = 200;
const MAX_SKILL_FILES = 10_000;
const MAX_MEMORIES = 1_000_000;
/** A memory's content, a path, a description: the families bound them; the wire only caps them. */
const MAX_TEXT = 16 * 1024 * 1024;

const id = z.string().min(1).max(200);
const count = z.number().int().nonnegative();
const text = z.string().max(MAX_TEXT);
const path = z.string().min(1).max(4_096);
const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "expected sha256:<64 lowercase hex>");
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex");
/** Base64 of at most `bytes` bytes. */
const base64 = (bytes: number) =>
  z
    .string()
    .max(Math.ceil(bytes / 3) * 4)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, "expected base64");

const claimLost = z.strictObject({ kind: z.literal("claim_lost"), reason: z.string() });
const claim = z.strictObject(claimPart);

const runResourceSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("file"),
    id,
    fileId: id,
    mountPath: path,
    filename: z.string().min(1).max(1_024),
    mimeType: z.string().min(1).max(256),
    sizeBytes: count,
    digest,
  }),
  z.strictObject({
    type: z.literal("memory_store"),
    memoryStoreId: id,
    mountPath: path,
    access: z.enum(["read_write", "read_only"]),
    name: z.string().max(1_024),
    description: text,
    instructions: text.nullable(),
  }),
  z.strictObject({
    type: z.literal("github_repository"),
    id,
    url: z.string().min(1).max(4_096),
    mountPath: path,
    checkout: z
      .discriminatedUnion("type", [
        z.strictObject({ type: z.literal("branch"), name: z.string().min(1).max(1_024) }),
        z.strictObject({ type: z.literal("commit"), sha: z.string().min(1).max(64) }),
      ])
      .nullable(),
    hasToken: z.boolean(),
  }),
]);

const runSkillSchema = z.strictObject({
  skillId: id,
  version: z.string().min(1).max(200),
  name: z.string().max(1_024),
  description: text,
  files: z.array(z.strictObject({ path, digest, sizeBytes: count })).max(MAX_SKILL_FILES),
});

const snapshotEntrySchema = z.strictObject({ memoryId: id, path, content: text, contentSha256: sha256Hex });

const memoryChangeSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("create"), path, content: text }),
  z.strictObject({
    kind: z.literal("update"),
    memoryId: id,
    path,
    content: text,
    expectedContentSha256: sha256Hex,
  }),
  z.strictObject({ kind: z.literal("delete"), memoryId: id, path, expectedContentSha256: sha256Hex }),
]);

const memoryOutcomeSchema = z.discriminatedUnion("outcome", [
  z.strictObject({
    path,
    outcome: z.literal("written"),
    memoryId: id,
    versionId: id,
    contentSha256: sha256Hex,
  }),
  z.strictObject({ path, outcome: z.literal("deleted"), memoryId: id, versionId: id }),
  z.strictObject({ path, outcome: z.literal("conflict"), reason: z.string().max(4_096) }),
  z.strictObject({ path, outcome: z.literal("refused"), reason: z.string().max(4_096) }),
]);

/** Every resource route: its path under the worker prefix, its request and its answer. */
export const RESOURCE_ROUTES = {
  resolveResources: {
    path: "/resources/resolve",
    request: claim,
    response: z.discriminatedUnion("kind", [
      z.strictObject({
        kind: z.literal("resolved"),
        resources: z.array(runResourceSchema).max(MAX_RESOURCES),
        skills: z.array(runSkillSchema).max(MAX_SKILLS),
      }),
      claimLost,
    ]),
  },
  // `none`: no blob of that digest is referenced by this session's resources or pinned skills
  // (or none is stored): the same answer either way, so a digest probe learns nothing.
  readBlob: {
    path: "/resources/read-blob",
    request: z.strictObject({ ...claimPart, digest }),
    response: z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("blob"), data: base64(MAX_WIRE_BLOB_BYTES) }),
      z.strictObject({ kind: z.literal("none") }),
      claimLost,
    ]),
  },
  memorySnapshot: {
    path: "/resources/memory-snapshot",
    request: z.strictObject({ ...claimPart, memoryStoreId: id }),
    response: z.discriminatedUnion("kind", [
      z.strictObject({
        kind: z.literal("snapshot"),
        entries: z.array(snapshotEntrySchema).max(MAX_MEMORIES),
      }),
      claimLost,
    ]),
  },
  writeMemory: {
    path: "/resources/write-memory",
    request: z.strictObject({
      ...claimPart,
      memoryStoreId: id,
      changes: z.array(memoryChangeSchema).max(MAX_WIRE_MEMORY_CHANGES),
    }),
    response: z.discriminatedUnion("kind", [
      z.strictObject({
        kind: z.literal("written"),
        outcomes: z.array(memoryOutcomeSchema).max(MAX_WIRE_MEMORY_CHANGES),
      }),
      claimLost,
    ]),
  },
  // A repository's token, for one clone on the worker's host: base64, zeroed on both ends after use.
  repositoryToken: {
    path: "/resources/repository-token",
    request: z.strictObject({ ...claimPart, resourceId: id }),
    response: z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("token"), token: base64(64 * 1024) }),
      z.strictObject({ kind: z.literal("none") }),
      claimLost,
    ]),
  },
} as const;

// Compile-time proof that the wire carries exactly what the port exchanges: changing a type of
// resources/ports.ts without this wire (or the other way round) fails `tsc`.
type Assert<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Answer<R extends keyof typeof RESOURCE_ROUTES> = z.infer<(typeof RESOURCE_ROUTES)[R]["response"]>;
export type ResourceWireMatchesPorts = Assert<
  Same<z.infer<typeof claim>, ResourceClaim> extends true
    ? Same<z.infer<typeof runResourceSchema>, RunResource> extends true
      ? Same<z.infer<typeof runSkillSchema>, RunSkill> extends true
        ? Same<z.infer<typeof snapshotEntrySchema>, MemorySnapshotEntry> extends true
          ? Same<z.infer<typeof memoryChangeSchema>, MemoryChange> extends true
            ? Same<z.infer<typeof memoryOutcomeSchema>, MemoryChangeOutcome>
            : false
          : false
        : false
      : false
    : false
>;
export type ResolvedMatchesPorts = Assert<
  Same<
    Omit<Extract<Answer<"resolveResources">, { kind: "resolved" }>, "kind">,
    { resources: RunResource[]; skills: RunSkill[] }
  >
>;
