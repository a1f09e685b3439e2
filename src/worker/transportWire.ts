/**
 * The remote worker transport's wire, declared once: the coordinator's HTTP routes parse requests
 * with these schemas and the worker's HTTP client parses responses with them. Field names mirror
 * the ports' types (camelCase) so nothing is mapped by hand on either side.
 *
 * Nested documents the coordinator already validated when they were written (an agent definition,
 * an environment config, fact bodies) are checked only as JSON objects: the worker receives the
 * exact stored form and the runtime reads it, so re-declaring those shapes here would only drift.
 */
import { z } from "zod";
import {
  INLINE_DESCRIPTION_MAX_CHARS,
  INLINE_NAME_MAX_CHARS,
  INLINE_SYSTEM_MAX_CHARS,
} from "../coordinator/commitOperation.js";
import type { EnvironmentConfig } from "../coordinator/environmentConfig.js";
import type { Activation, ExecutableAgentSnapshot } from "../coordinator/ports.js";
import { imageReferenceProblem, isDigestReference } from "../kernel/containerImages.js";
import type { JsonObject } from "../kernel/json.js";
import { credentialOpenRequestSchema, credentialOpenResponseSchema } from "./credentialWire.js";
import { packageResolutionRequestSchema, packageResolutionResponseSchema } from "./packageResolutionWire.js";
import { RESOURCE_ROUTES } from "./resourceWire.js";
import {
  secretOpenRequestSchema,
  secretOpenResponseSchema,
  secretVariablesRequestSchema,
  secretVariablesResponseSchema,
} from "./secretWire.js";
import { TUNNEL_ROUTES } from "./tunnelWire.js";

/** Every worker route lives under this prefix, outside the API-key-authenticated Managed Agents API. */
export const WORKER_ROUTE_PREFIX = "/v1/awaken/worker";
/** The shared secret both sides read; the worker sends it as `Authorization: Bearer <token>`. */
export const WORKER_TOKEN_ENV = "AWAKEN_WORKER_TOKEN";
/** Upper bound of a claim's long-poll, so a stopping worker is never held for long. */
export const MAX_CLAIM_WAIT_MS = 2_000;
/** Bound of a claim's wake cursor (an opaque token of the coordinator process and a count). */
const MAX_WAKE_CURSOR = 64;
/** Shorter tokens are refused at start-up on both sides: the token is all that guards the fence. */
export const MIN_WORKER_TOKEN_LENGTH = 16;

const isObject = (value: unknown): boolean =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const jsonObject = z.custom<JsonObject>(isObject, "expected a JSON object");
const id = z.string().min(1).max(200);
const count = z.number().int().nonnegative();

export const factSchema = z.object({ id, type: z.string().min(1), body: jsonObject });

export const committedFactSchema = factSchema.extend({
  sessionId: id,
  threadId: id,
  seq: count,
  createdAt: count,
});

export const commitOperationSchema = z.object({
  opId: id,
  runId: id,
  threadId: id,
  owner: id,
  epoch: count,
  expectedVersion: count,
  facts: z.array(factSchema),
  settle: z.enum(["done", "awaiting", "failed"]).optional(),
  spawns: z
    .array(
      z.object({
        threadId: id,
        runId: id,
        agentName: z.string().min(1).max(256),
        agent: z.custom<ExecutableAgentSnapshot>(isObject, "expected an agent snapshot"),
        inline: z
          .object({
            name: z.string().min(1).max(INLINE_NAME_MAX_CHARS),
            system: z.string().max(INLINE_SYSTEM_MAX_CHARS).nullable(),
            description: z.string().max(INLINE_DESCRIPTION_MAX_CHARS).nullable(),
          })
          .optional(),
        facts: z.array(factSchema).min(1),
      }),
    )
    .max(20)
    .optional(),
  answer: z.object({ parentThreadId: id, facts: z.array(factSchema).min(1) }).optional(),
});

const commitReceiptSchema = z.object({
  opId: id,
  runId: id,
  threadId: id,
  versionAfter: count,
  eventIds: z.array(id),
  committedAt: count,
  settled: z.enum(["done", "awaiting", "failed"]).nullable(),
  answeredVersion: count.optional(),
});

export const commitResultSchema = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), receipt: commitReceiptSchema, duplicate: z.boolean() }),
  z.object({
    ok: z.literal(false),
    rejection: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("stale_claim"), reason: z.string() }),
      z.object({ kind: z.literal("version_conflict"), currentVersion: count }),
      z.object({ kind: z.literal("operation_conflict"), reason: z.string() }),
    ]),
  }),
]);

const activationSchema = z.object({
  runId: id,
  sessionId: id,
  threadId: id,
  workspaceId: id,
  owner: id,
  epoch: count,
  leaseExpiresAt: count,
  crashCount: count,
  agent: z.object({
    workspaceId: id,
    agentId: id,
    version: count,
    fingerprint: z.string(),
    definition: z.custom<ExecutableAgentSnapshot["definition"]>(isObject, "expected an agent definition"),
    publishedAt: count,
    // A session's pinned roster: the agents its runs may spawn as child threads.
    roster: z.array(z.custom<ExecutableAgentSnapshot>(isObject, "expected an agent snapshot")).optional(),
  }),
  environment: z.object({
    id,
    revision: count,
    config: z.custom<EnvironmentConfig>(isObject, "expected an environment config"),
  }),
  history: z.array(committedFactSchema),
  // The run's trace (W3C `traceparent`[ `tracestate`]): the remote worker's spans continue it.
  traceContext: z.string().max(1_024).nullable().optional(),
  // Whether the slice's spans may carry content, as the coordinator decided at this claim (request
  // and consent); the worker adds its own ceiling. Absent (an older coordinator): false.
  captureContent: z.boolean().optional(),
  // When the session's data subject was last erased: a workspace from before then is deleted.
  workspaceErasedAt: count.optional(),
  // The revision's ready derived image, pinned to its digest; absent: the revision's image as named.
  builtImage: z
    .string()
    .max(255)
    .refine(
      (r) => imageReferenceProblem(r) === null && isDigestReference(r),
      "expected an image reference pinned to a sha256 digest",
    )
    .optional(),
  // Whether the session had resources at the claim; absent (an older coordinator): the worker asks.
  sessionHasResources: z.boolean().optional(),
  // The session's budget at the claim; absent (an older coordinator): none.
  budget: jsonObject.nullable().optional(),
});

const evidenceSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("preview_start"),
    eventId: id,
    preview: z.enum(["text", "thinking", "tool_input"]),
    toolName: z.string().min(1).max(256).optional(),
  }),
  z.object({ kind: z.literal("preview_delta"), eventId: id, index: count, text: z.string() }),
  z.object({ kind: z.literal("preview_abandoned"), eventId: id }),
]);

/** The most preview items one request carries (an evidence batch, or a commit's pending previews). */
export const MAX_EVIDENCE_ITEMS = 10_000;
const evidenceItems = z.array(z.object({ sessionId: id, evidence: evidenceSchema })).max(MAX_EVIDENCE_ITEMS);

const claimRef = z.object({ runId: id, owner: id, epoch: count });
const empty = z.object({});

/**
 * Every route: its path under the prefix, what it accepts and what it answers. Leases are the
 * coordinator's setting (`awaken up --lease-ms`): a worker learns it from `config` and never sends
 * one, so a misconfigured worker cannot hold runs longer than the operator allows.
 */
export const WORKER_ROUTES = {
  config: { path: "/config", request: empty, response: z.object({ leaseMs: count, pollMs: count }) },
  claim: {
    path: "/claim",
    // `idleSince`: the `wakeCursor` of the claim that gave this slot the run it has since settled
    // (see ClaimWakeups): unless a signal went unanswered since, the claim waits before it looks.
    request: z.object({
      owner: id,
      waitMs: count.max(MAX_CLAIM_WAIT_MS),
      idleSince: z.string().max(MAX_WAKE_CURSOR).optional(),
    }),
    response: z.object({
      activation: activationSchema.nullable(),
      wakeCursor: z.string().max(MAX_WAKE_CURSOR),
    }),
  },
  renew: { path: "/renew", request: claimRef, response: z.object({ held: z.boolean() }) },
  release: { path: "/release", request: claimRef, response: empty },
  commit: {
    path: "/commit",
    // `evidence`: previews still pending when the commit left (they end with it). The coordinator
    // publishes them before it applies the operation, so they precede the facts on every stream,
    // without a round trip of their own.
    request: z.object({ op: commitOperationSchema, evidence: evidenceItems.optional() }),
    response: commitResultSchema,
  },
  readThread: {
    path: "/read-thread",
    request: z.object({ threadId: id, afterSeq: count }),
    response: z.object({ facts: z.array(committedFactSchema) }),
  },
  evidence: {
    path: "/evidence",
    request: z.object({ items: evidenceItems }),
    response: empty,
  },
  // A remote last-mile holder's credential: the claim is checked live first, then custody opens
  // the session's pin (see credentialWire.ts and edge/worker-transport/credentialRoute.ts).
  openCredential: {
    path: "/credentials/open",
    request: credentialOpenRequestSchema,
    response: credentialOpenResponseSchema,
  },
  // The sandbox's `environment_variable` credentials (the egress proxy is the holder), behind the
  // same live-claim check (secretWire.ts and edge/worker-transport/secretRoute.ts).
  secretVariables: {
    path: "/credentials/secret-variables",
    request: secretVariablesRequestSchema,
    response: secretVariablesResponseSchema,
  },
  openSecret: {
    path: "/credentials/open-secret",
    request: secretOpenRequestSchema,
    response: secretOpenResponseSchema,
  },
  // An environment revision's frozen package resolution, read or recorded behind the same
  // live-claim check (packageResolutionWire.ts).
  packageResolution: {
    path: "/package-resolution",
    request: packageResolutionRequestSchema,
    response: packageResolutionResponseSchema,
  },
  // A remote run's `RunResources` calls (resolve, blobs, memory, repository tokens), behind the
  // same live-claim check (resourceWire.ts and edge/worker-transport/resourceRoutes.ts).
  ...RESOURCE_ROUTES,
  // A remote run's MCP requests through a tunnel, behind the same live-claim check (tunnelWire.ts).
  ...TUNNEL_ROUTES,
} as const;

export { MAX_WIRE_BLOB_BYTES, MAX_WIRE_MEMORY_CHANGES } from "./resourceWire.js";
export { MAX_WIRE_TUNNEL_BODY_BYTES } from "./tunnelWire.js";

export type WorkerRouteName = keyof typeof WORKER_ROUTES;
export type WorkerRequest<R extends WorkerRouteName> = z.infer<(typeof WORKER_ROUTES)[R]["request"]>;
export type WorkerResponse<R extends WorkerRouteName> = z.infer<(typeof WORKER_ROUTES)[R]["response"]>;

// Compile-time proof that the wire carries exactly what the ports exchange.
type Assert<T extends true> = T;
export type WireMatchesPorts = Assert<
  WorkerResponse<"claim">["activation"] extends Activation | null ? true : false
>;

// Indexing WORKER_ROUTES with a generic name yields a union of schemas TypeScript cannot narrow;
// these two accessors state the per-route pairing once.
export function requestSchema<R extends WorkerRouteName>(name: R): z.ZodType<WorkerRequest<R>> {
  return WORKER_ROUTES[name].request as unknown as z.ZodType<WorkerRequest<R>>;
}
export function responseSchema<R extends WorkerRouteName>(name: R): z.ZodType<WorkerResponse<R>> {
  return WORKER_ROUTES[name].response as unknown as z.ZodType<WorkerResponse<R>>;
}
