import type { FastifyInstance } from "fastify";
import type { ImageBuildService } from "../../coordinator/imageBuilds/imageBuildService.js";
import { AwakenError } from "../../kernel/errors.js";
import type { ImageBuildRecord } from "../../kernel/imageBuild.js";
import type { PackageResolution } from "../../kernel/packageResolution.js";
import {
  BUILD_WORKER_ROUTE_PREFIX,
  BUILD_WORKER_ROUTES,
  type BuildJob,
} from "../../worker/buildWorkerWire.js";
import { bearerTokenCheck } from "../http/bearerToken.js";

export interface BuildWorkerRouteDeps {
  builds: ImageBuildService;
  /** The build worker token (its own: it cannot claim runs, and a run worker cannot claim builds). */
  token: string;
  /** The frozen resolution a build installs, by id (the build names it; the record has its content). */
  resolution(resolutionId: string): Promise<PackageResolution | null>;
}

/**
 * The build-worker transport: claim, renew, settle, release, authenticated by the build worker token
 * only. A claim answers the base image and the frozen resolution, never a session, a secret or a
 * registry credential; a settle names the lease and is refused when the lease is stale.
 */
export function buildWorkerRoutes(app: FastifyInstance, deps: BuildWorkerRouteDeps): void {
  const tokenMatches = bearerTokenCheck(deps.token);
  app.addHook("onRequest", (request, _reply, done) => {
    if (tokenMatches(request.headers.authorization)) done();
    else
      done(
        new AwakenError(
          "unauthenticated",
          "Invalid or missing build worker token (AWAKEN_BUILD_WORKER_TOKEN).",
        ),
      );
  });
  const parse = <
    S extends { safeParse(v: unknown): { success: boolean; data?: unknown; error?: { message: string } } },
  >(
    schema: S,
    body: unknown,
    name: string,
  ) => {
    const parsed = schema.safeParse(body ?? {});
    if (!parsed.success)
      throw new AwakenError(
        "invalid_request",
        `Invalid build worker ${name} request: ${parsed.error?.message}`,
      );
    return parsed.data;
  };
  const state = (build: ImageBuildRecord) => ({ state: build.state, epoch: build.epoch });
  const R = BUILD_WORKER_ROUTES;

  app.post(`${BUILD_WORKER_ROUTE_PREFIX}${R.claim.path}`, async (request) => {
    const { owner } = parse(R.claim.request, request.body, "claim") as { owner: string };
    const build = await deps.builds.claim(owner);
    if (build === null) return { job: null };
    const resolution = await deps.resolution(build.resolutionId);
    if (resolution === null) {
      // Nothing to install from: fail it (an operator rebuilds once the resolution is back).
      await deps.builds.settle(
        { buildId: build.id, owner, epoch: build.epoch },
        { kind: "failed", error: `the frozen resolution ${build.resolutionId} is not recorded`, logTail: "" },
      );
      return { job: null };
    }
    const job: BuildJob = {
      buildId: build.id,
      epoch: build.epoch,
      leaseMs: deps.builds.leaseMs,
      baseImage: build.baseImage,
      resolutionId: build.resolutionId,
      recipeDigest: build.recipeDigest,
      resolution,
    };
    return { job };
  });
  app.post(`${BUILD_WORKER_ROUTE_PREFIX}${R.renew.path}`, async (request) =>
    state(await deps.builds.renew(parse(R.renew.request, request.body, "renew") as never)),
  );
  app.post(`${BUILD_WORKER_ROUTE_PREFIX}${R.release.path}`, async (request) =>
    state(await deps.builds.release(parse(R.release.request, request.body, "release") as never)),
  );
  app.post(`${BUILD_WORKER_ROUTE_PREFIX}${R.settle.path}`, async (request) => {
    const { outcome, ...lease } = parse(R.settle.request, request.body, "settle") as {
      buildId: string;
      owner: string;
      epoch: number;
      outcome: never;
    };
    return state(await deps.builds.settle(lease, outcome));
  });
}
