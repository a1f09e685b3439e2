/**
 * The build-worker transport: how a build worker (`awaken build-worker`, no database) claims an image
 * build, renews its lease, and settles or releases it, over HTTP with its own token. Registry
 * addresses and credentials never cross it: the worker reports only the digest-pinned reference.
 */
import { z } from "zod";
import { MAX_BUILD_ERROR, MAX_BUILD_LOG_TAIL } from "../kernel/imageBuild.js";

export const BUILD_WORKER_ROUTE_PREFIX = "/v1/awaken/build-worker";
export const BUILD_WORKER_TOKEN_ENV = "AWAKEN_BUILD_WORKER_TOKEN";
export const MIN_BUILD_WORKER_TOKEN_LENGTH = 16;

const owner = z.string().min(1).max(200);
const buildId = z.string().regex(/^imgbuild_[a-f0-9]{32}$/);
const lease = z.object({ buildId, owner, epoch: z.number().int().positive() }).strict();

/** What a claim answers: enough to build, nothing more (no session, no environment, no secret). */
export const buildJobSchema = z.object({
  buildId,
  epoch: z.number().int().positive(),
  leaseMs: z.number().int().positive(),
  baseImage: z.string(),
  resolutionId: z.string(),
  recipeDigest: z.string(),
  /** The frozen resolution's content (npm lockfile / pip lines), checked again by the worker. */
  resolution: z.unknown(),
});
export type BuildJob = z.infer<typeof buildJobSchema>;

export const buildStateSchema = z.object({ state: z.string(), epoch: z.number().int() });

export const BUILD_WORKER_ROUTES = {
  claim: {
    path: "/claim",
    request: z.object({ owner }).strict(),
    response: z.object({ job: buildJobSchema.nullable() }),
  },
  renew: { path: "/renew", request: lease, response: buildStateSchema },
  release: { path: "/release", request: lease, response: buildStateSchema },
  settle: {
    path: "/settle",
    request: lease.extend({
      outcome: z.discriminatedUnion("kind", [
        z
          .object({
            kind: z.literal("ready"),
            digest: z.string().regex(/^sha256:[a-f0-9]{64}$/),
            imageReference: z.string().min(1).max(255),
            logTail: z.string().max(MAX_BUILD_LOG_TAIL),
          })
          .strict(),
        z
          .object({
            kind: z.literal("failed"),
            error: z.string().min(1).max(MAX_BUILD_ERROR),
            logTail: z.string().max(MAX_BUILD_LOG_TAIL),
          })
          .strict(),
      ]),
    }),
    response: buildStateSchema,
  },
} as const;
