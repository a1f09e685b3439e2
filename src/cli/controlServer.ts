import { resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { type Logger, pino } from "pino";
import { acpRuntimeCatalog } from "../brains/catalog.js";
import type { AcpRuntimeCatalog } from "../brains/ports.js";
import type { SkillVersionResolver } from "../control/ports.js";
import type { ExecutableAgentRegistrar } from "../coordinator/ports.js";
import { createControlHttpServer } from "../edge/control-link/controlHttpServer.js";
import { LinkClient } from "../edge/control-link/linkClient.js";
import { CONTROL_METHODS, linkServices } from "../edge/control-link/linkServices.js";
import { BUILT_CONSOLE_DIR, loadConsoleAssets } from "../edge/http/consoleAssets.js";
import { readinessProbe } from "../edge/http/readinessProbe.js";
import { createHttpServer } from "../edge/httpServer.js";
import { controlDoorEdge } from "../edge/managed-agents/controlDoorEdge.js";
import { systemClock } from "../kernel/clock.js";
import { createPrometheusMetrics } from "../observability/prometheusMetrics.js";
import { KNOWN_MIGRATIONS } from "../stores/sql/migrations/index.js";
import type { SessionPins } from "./controlParts.js";
import { type ApiKeySource, openLocalControl } from "./controlPlane.js";
import { metricsTokenFrom } from "./metricsToken.js";
import { outboundFor } from "./outbound.js";
import { assertCanListen } from "./portProbe.js";
import { prepareDataDir } from "./startupKeys.js";
import { openStorage } from "./storage.js";

export interface ControlOptions {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string | undefined;
  dbPoolSize?: number | undefined;
  /** The Coordinator this Control registers publications with and reads sessions' pins from. */
  coordinatorUrl: string;
  /** AWAKEN_CONTROL_TOKEN, the same on the Coordinator. */
  controlToken: string;
  /** AWAKEN_API_KEY, if set. */
  apiKey: string | undefined;
  allowPrivateHosts?: string | undefined;
  env: NodeJS.ProcessEnv;
  /** The ACP runtimes `acp:<runtime>` models may name; absent: the shipped ones alone. */
  acpRuntimes?: AcpRuntimeCatalog | undefined;
  /** Registers every publication again (a Coordinator whose catalog was lost or rebuilt). */
  rebuildCatalog?: boolean | undefined;
  /**
   * Control's own door: the operator API (agents, vaults, keys, audits, consent) and the Console,
   * on a port apart from the private link's. Null: none (clients use the coordinator alone).
   */
  api?: { host: string; port: number } | null | undefined;
}

export interface RunningControl {
  url: string;
  /** Control's own door, when it serves one. */
  apiUrl: string | null;
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  storage: string;
  app: FastifyInstance;
  stop(): Promise<void>;
}

/**
 * `awaken control`: Control alone. Its store (authoring, IAM, vaults, audits, consent), its master
 * key, and the private link the Coordinator calls; publications are registered with the
 * Coordinator over the same link, and custody reads a session's pins from it.
 */
export async function startControl(
  options: ControlOptions,
  logger: Logger = pino({ level: "info" }),
): Promise<RunningControl> {
  const dataDir = resolve(options.dataDir);
  const clock = systemClock;
  const outbound = outboundFor(options.allowPrivateHosts, options.env);
  const metricsToken = metricsTokenFrom(options.env);
  await assertCanListen(options.host, options.port);
  if (options.api) await assertCanListen(options.api.host, options.api.port);
  const { found, retiredKeys } = prepareDataDir(dataDir, options.env, logger);
  const storage = await openStorage(
    { dataDir, databaseUrl: options.databaseUrl, poolSize: options.dbPoolSize },
    clock,
    logger,
  );
  const metrics = createPrometheusMetrics();
  const coordinator = new LinkClient({
    baseUrl: options.coordinatorUrl,
    token: options.controlToken,
    peer: "the Coordinator",
  });
  const registrar = coordinator.service<ExecutableAgentRegistrar, ["register"]>("registrar", ["register"]);
  const sessionPins = coordinator.service<SessionPins, ["get", "advance"]>("sessionPins", ["get", "advance"]);
  // Skills are stored with the Coordinator's resources: publications pin their versions through it.
  const skillVersions = coordinator.service<SkillVersionResolver, ["resolve"]>("skillVersions", ["resolve"]);
  let control: Awaited<ReturnType<typeof openLocalControl>>;
  try {
    // Only Control's stores and the installation facts: the Coordinator's are never opened here.
    control = await openLocalControl({
      dataDir,
      apiKey: options.apiKey,
      stores: storage.control,
      facts: storage.facts,
      found,
      retiredKeys,
      clock,
      metrics,
      outbound,
      registrar,
      sessionPins,
      skillVersions,
      revocations: storage.revocations,
      acpRuntimes: options.acpRuntimes ?? acpRuntimeCatalog(),
      logger,
    });
  } catch (error) {
    await storage.close();
    throw error;
  }
  // What both of Control's listeners serve: the link to coordinators, the door to operators.
  const { iam, agents, vaults, credentials, credentialOpens, adminAudit, userProfiles } = control;
  const operated = { iam, agents, vaults, credentials, credentialOpens, adminAudit, userProfiles };
  let ready = false;
  let draining = false;
  const app = createControlHttpServer({
    logger,
    isReady: () => ready,
    readiness: readinessProbe({
      appliedMigrations: () => storage.appliedMigrations(),
      knownMigrations: KNOWN_MIGRATIONS,
      workers: () => null,
      draining: () => draining,
    }),
    metrics,
    metricsToken,
    link: {
      token: options.controlToken,
      services: linkServices(CONTROL_METHODS, {
        ...operated,
        consents: control.consents,
        custody: control.custody,
        pushSealer: control.pushSealer,
        repoSealer: control.repoSealer,
        tunnelSealer: control.tunnelSealer,
      }),
    },
  });
  const door = options.api
    ? createHttpServer(
        { ...operated, clock, dataSubjects: { consents: control.consents } },
        {
          logger,
          bodyLimitBytes: 32 * 1024 * 1024,
          isReady: () => ready,
          console: loadConsoleAssets(BUILT_CONSOLE_DIR),
          userProfileActions: control.userProfiles,
        },
        [controlDoorEdge],
      )
    : null;
  const url = await listenOn(app, options.host, options.port);
  let apiUrl: string | null = null;
  try {
    if (door && options.api) apiUrl = await listenOn(door, options.api.host, options.api.port);
  } catch (error) {
    await app.close();
    await storage.close();
    throw error;
  }
  if (options.rebuildCatalog) {
    const marked = await control.rebuildCatalog();
    logger.info({ component: "registration", marked }, `registering ${marked} publication(s) again`);
  }
  control.start();
  ready = true;
  let stopping: Promise<void> | null = null;
  return {
    url,
    apiUrl,
    apiKey: control.apiKey,
    apiKeySource: control.apiKeySource,
    storage: storage.description,
    app,
    stop: () => {
      stopping ??= (async () => {
        draining = true;
        ready = false;
        await control.stop();
        await door?.close();
        await app.close();
        await outbound.close();
        await storage.close();
        control.zeroKeys();
      })();
      return stopping;
    },
  };
}

/** Listens and answers the base URL the server is reachable at (the port a `0` was given). */
async function listenOn(app: FastifyInstance, host: string, port: number): Promise<string> {
  await app.listen({ host, port });
  const address = app.server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  return `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
}
