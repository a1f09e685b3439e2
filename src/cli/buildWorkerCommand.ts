import { readFileSync } from "node:fs";
import { Command } from "commander";
import { BuildClient } from "../worker/build/buildClient.js";
import { currentInstance, instanceName } from "../worker/build/builderInstance.js";
import { runBuildWorker } from "../worker/build/buildWorker.js";
import { BUILD_WORKER_TOKEN_ENV, MIN_BUILD_WORKER_TOKEN_LENGTH } from "../worker/buildWorkerWire.js";
import { cliLogger, logLevelOption } from "./cliLogger.js";

const HELP = `
A build worker has no database: it claims container image builds from a coordinator over HTTP,
builds each with buildah (runc, explicit ulimits) from the base image and the revision's frozen
package resolution, pushes it to the registry, reads the digest back and reports it. It renews its
lease while building; SIGTERM aborts the build and hands it back; a worker killed outright leaves
it to the next one once the lease lapses (the coordinator's --image-build-lease-s). At start-up it
removes the buildah working containers, images and build contexts that killed build workers of
this host left behind (named awaken-build-<host>-<pid>-<start>; nothing else is touched). Only
root is supported on hosts where rootless buildah cannot make user namespaces (this is said at
start-up).

Environment:
  AWAKEN_BUILD_WORKER_TOKEN   the build worker token (≥ 16 characters), the same on the coordinator;
                              or --token-file
  AWAKEN_COORDINATOR_URL      used when --coordinator-url is not given
  AWAKEN_REGISTRY             used when --registry is not given (host:port)
  AWAKEN_REGISTRY_AUTH_FILE   used when --registry-auth-file is not given

The registry address and credentials stay in this process's configuration: they are passed to
buildah/skopeo by file, never sent to the coordinator, and never written to a log or a session.
`;

export function buildWorkerCommand(): Command {
  return new Command("build-worker")
    .description("Build container images for environments (claims builds from a coordinator; no database)")
    .option("--coordinator-url <url>", "the coordinator (awaken up) to claim builds from")
    .option("--token <token>", `the build worker token (prefer ${BUILD_WORKER_TOKEN_ENV} or --token-file)`)
    .option("--token-file <path>", "a file holding the build worker token")
    .option("--registry <host:port>", "the registry images are pushed to")
    .option("--repository <name>", "the repository in the registry", "awaken/environments")
    .option("--registry-auth-file <path>", "a containers auth.json with the registry credentials")
    .option("--registry-tls-verify <bool>", "verify the registry's TLS certificate", "true")
    .option("--runtime <path>", "the OCI runtime buildah runs RUN steps with", "/usr/sbin/runc")
    .option("--ulimit <limit...>", "ulimits for RUN steps", ["nofile=1024:1024", "nproc=1024:1024"])
    .option("--build-timeout-s <seconds>", "a build longer than this fails", "900")
    .option("--poll-ms <ms>", "how long an idle worker waits between claims", "1000")
    .option(
      "--registry-retry-ms <ms>",
      "after the registry refused a push, wait this long before claiming again",
      "5000",
    )
    .addOption(logLevelOption())
    .addHelpText("after", HELP)
    .action(async (opts) => {
      const logger = cliLogger(process.env, opts.logLevel);
      const url = opts.coordinatorUrl ?? process.env.AWAKEN_COORDINATOR_URL;
      const token =
        opts.token ??
        (opts.tokenFile ? readFileSync(opts.tokenFile, "utf8").trim() : process.env[BUILD_WORKER_TOKEN_ENV]);
      const registry = opts.registry ?? process.env.AWAKEN_REGISTRY;
      const problem = !url
        ? "missing --coordinator-url (or AWAKEN_COORDINATOR_URL)"
        : !token || token.length < MIN_BUILD_WORKER_TOKEN_LENGTH
          ? `missing or short build worker token: ${BUILD_WORKER_TOKEN_ENV}, --token-file or --token (≥ ${MIN_BUILD_WORKER_TOKEN_LENGTH} characters)`
          : !registry || !/^[a-z0-9.-]+(?::[0-9]{1,5})?$/i.test(registry)
            ? "missing or malformed --registry host:port (or AWAKEN_REGISTRY)"
            : null;
      if (problem !== null) {
        logger.error(problem);
        process.exitCode = 2;
        return;
      }
      if (typeof process.getuid === "function" && process.getuid() !== 0)
        logger.warn("running buildah rootless: this host must allow user namespaces, or builds fail");
      const stop = new AbortController();
      for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => stop.abort());
      await runBuildWorker({
        client: new BuildClient(String(url).replace(/\/$/, ""), token as string),
        builder: {
          registry: {
            address: registry,
            repository: opts.repository,
            tlsVerify: opts.registryTlsVerify !== "false",
            authFile: opts.registryAuthFile ?? process.env.AWAKEN_REGISTRY_AUTH_FILE,
          },
          instance: instanceName(currentInstance()),
          runtime: opts.runtime,
          ulimits: opts.ulimit,
          timeoutMs: Number(opts.buildTimeoutS) * 1000,
        },
        pollMs: Number(opts.pollMs),
        registryRetryMs: Number(opts.registryRetryMs),
        logger,
        stop: stop.signal,
      });
    });
}
