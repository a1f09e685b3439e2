/**
 * `awaken build-worker`'s loop: claim a build, build it while renewing the lease, settle it. A lost
 * lease (the coordinator's fence answers 409) aborts the build at once; SIGTERM aborts and releases,
 * so the next worker claims it without waiting for the lease to lapse. A worker killed outright
 * leaves the build claimable once its lease lapses, and what buildah made for it is removed by the
 * next worker started on its host.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { sleep } from "../../kernel/clock.js";
import type { BuildJob } from "../buildWorkerWire.js";
import { type BuildClient, BuildLeaseLost, type HeldLease } from "./buildClient.js";
import { removeBuildLeftovers } from "./buildLeftovers.js";
import { type BuilderOptions, buildImage } from "./imageBuilder.js";

export interface BuildWorkerOptions {
  client: BuildClient;
  builder: BuilderOptions;
  pollMs: number;
  logger: Logger;
  /** How long to wait before claiming again after the registry refused a push. */
  registryRetryMs: number;
  /** Stops claiming and aborts the build in progress (SIGTERM). */
  stop: AbortSignal;
}

export async function runBuildWorker(options: BuildWorkerOptions): Promise<void> {
  const owner = `build-${hostname()}-${randomUUID().slice(0, 8)}`;
  const { client, logger, stop } = options;
  logger.info({ owner, instance: options.builder.instance }, "build worker started");
  await removeLeftovers(options);
  while (!stop.aborted) {
    let job: BuildJob | null = null;
    try {
      job = await client.claim(owner);
    } catch (error) {
      logger.warn({ err: (error as Error).message }, "could not claim an image build");
    }
    if (job === null) {
      await sleep(options.pollMs, stop).catch(() => {});
      continue;
    }
    const handedBack = await buildOne(options, { buildId: job.buildId, owner, epoch: job.epoch }, job);
    // The registry is down: the build waits (pending) rather than fails; look again later.
    if (handedBack) await sleep(options.registryRetryMs, stop).catch(() => {});
  }
  logger.info({ owner }, "build worker stopped");
}

/** A build worker killed outright left buildah's working container (and more) behind: remove it. */
async function removeLeftovers(options: BuildWorkerOptions): Promise<void> {
  const { logger } = options;
  try {
    const removed = await removeBuildLeftovers(options.builder.runtime);
    const { failures, ...counts } = removed;
    const total = counts.containers + counts.images + counts.contexts;
    if (total > 0) logger.warn(counts, "removed what killed build workers of this host left behind");
    else logger.info(counts, "no build worker leftovers on this host");
    if (failures.length > 0) logger.warn({ failures }, "could not remove some build worker leftovers");
  } catch (error) {
    logger.warn({ err: (error as Error).message }, "could not look for build worker leftovers");
  }
}

/** Builds one claimed job; true when it was handed back because the registry did not take it. */
async function buildOne(options: BuildWorkerOptions, lease: HeldLease, job: BuildJob): Promise<boolean> {
  const { client, logger, stop } = options;
  const lost = new AbortController();
  const abort = AbortSignal.any([lost.signal, stop]);
  // Renew at a third of the lease, so two missed renewals still leave it held.
  const renewal = setInterval(
    () => {
      client.renew(lease).catch((error: unknown) => {
        if (error instanceof BuildLeaseLost) {
          logger.warn(
            { buildId: lease.buildId, reason: error.message },
            "image build lease lost; abandoning the build",
          );
          lost.abort();
        } else
          logger.warn(
            { buildId: lease.buildId, err: (error as Error).message },
            "could not renew the build lease",
          );
      });
    },
    Math.max(200, Math.floor(job.leaseMs / 3)),
  );
  logger.info({ buildId: job.buildId, epoch: job.epoch, base: job.baseImage }, "building image");
  try {
    const result = await buildImage(job, options.builder, abort);
    if (result.kind === "registry_unavailable") {
      await client.release(lease);
      logger.warn(
        { buildId: job.buildId, reason: result.reason },
        "the registry did not take the image; build handed back",
      );
      return true;
    }
    await client.settle(lease, result);
    logger.info({ buildId: job.buildId, state: result.kind }, "image build settled");
  } catch (error) {
    if (stop.aborted && !lost.signal.aborted) {
      await client.release(lease).catch(() => {});
      logger.info({ buildId: job.buildId }, "image build released (stopping)");
    } else if (!(error instanceof BuildLeaseLost) && !lost.signal.aborted) {
      logger.warn({ buildId: job.buildId, err: (error as Error).message }, "image build not settled");
    }
  } finally {
    clearInterval(renewal);
  }
  return false;
}
