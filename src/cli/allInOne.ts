import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { type Logger, pino } from "pino";
import { acpRuntimeCatalog } from "../brains/catalog.js";
import { RegisteredAgentPinner } from "../control/agentPinning.js";
import { DEFAULT_WORKSPACE_ID } from "../control/iamService.js";
import type { SkillVersionResolver } from "../control/ports.js";
import { InProcessCommittedFactsFeed } from "../coordinator/committedFactsFeed.js";
import {
  type ErasedSessionWorkspaces,
  erasureVacuumFromEnv,
  SubjectErasureService,
} from "../coordinator/dataSubjects.js";
import { EnvironmentKeyService } from "../coordinator/environmentKeyService.js";
import { EnvironmentService } from "../coordinator/environmentService.js";
import { ImageBuildService } from "../coordinator/imageBuilds/imageBuildService.js";
import { InProcessLiveEvidenceBus } from "../coordinator/liveEvidenceBus.js";
import { localWorkerGateway } from "../coordinator/localWorkerGateway.js";
import { PackageResolutionRecords } from "../coordinator/packageResolutions.js";
import type { CoordinatorPorts } from "../coordinator/ports.js";
import { wakingOnSubscribe } from "../coordinator/pushOutbox.js";
import { LocalRegistrar } from "../coordinator/registrar.js";
import { sealedPushStore } from "../coordinator/sealedPushStore.js";
import { DEFAULT_SESSION_CHANGE_FEED, SessionChangeFeed } from "../coordinator/sessionChangeFeed.js";
import { SessionEntryService } from "../coordinator/sessionEntryService.js";
import { SessionService } from "../coordinator/sessionService.js";
import type { TailItem, TailOpenOptions } from "../coordinator/sessionTail.js";
import { StoreSessionTail } from "../coordinator/storeSessionTail.js";
import { TunnelRelay } from "../coordinator/tunnels/tunnelRelay.js";
import { TunnelService } from "../coordinator/tunnels/tunnelService.js";
import { WebhookService } from "../coordinator/webhookService.js";
import { WebhookSessionFollower } from "../coordinator/webhookSessionFollower.js";
import { WorkerConnections } from "../coordinator/workerConnections.js";
import { WorkerRoster } from "../coordinator/workerRoster.js";
import { DEFAULT_LEASE_LIMITS } from "../coordinator/workLease.js";
import { WorkQueueService } from "../coordinator/workQueueService.js";
import { WorkspaceQuotas } from "../coordinator/workspaceQuotas.js";
import { DeploymentScheduler } from "../deployments/deploymentScheduler.js";
import { DeploymentService } from "../deployments/deploymentService.js";
import { schedulingPolicyFromEnv } from "../deployments/schedulingPolicy.js";
import { DreamerAgents } from "../dreams/dreamerAgent.js";
import { DreamService } from "../dreams/dreamService.js";
import { DreamSweep } from "../dreams/dreamSweep.js";
import { A2aPusher } from "../edge/a2a/push/a2aPusher.js";
import { DEFAULT_PUSH_PACING } from "../edge/a2a/push/pushPacing.js";
import { LinkClient } from "../edge/control-link/linkClient.js";
import { COORDINATOR_METHODS, linkServices } from "../edge/control-link/linkServices.js";
import { checkConnectionLimits, connectionLimitsWith } from "../edge/http/connectionLimits.js";
import { BUILT_CONSOLE_DIR, loadConsoleAssets } from "../edge/http/consoleAssets.js";
import type { EdgeServices } from "../edge/http/edgeServices.js";
import { readinessProbe } from "../edge/http/readinessProbe.js";
import { serveTunnelUpgrades } from "../edge/http/tunnelUpgrade.js";
import { readTypedHistory } from "../edge/http/typedFacts.js";
import { WebhookTargets } from "../edge/http/webhookTargets.js";
import { createHttpServer, EDGE_ADAPTERS } from "../edge/httpServer.js";
import { deploymentSessionInputs } from "../edge/managed-agents/deploymentInputs.js";
import { SESSION_CREATED, sessionEventsOf, webhookEventBody } from "../edge/managed-agents/webhookEvents.js";
import { systemClock } from "../kernel/clock.js";
import { allowedContainerImages } from "../kernel/containerImages.js";
import { traceContentCeiling } from "../kernel/contentCapture.js";
import { newId } from "../kernel/ids.js";
import { resolutionBuildsImage } from "../kernel/imageBuild.js";
import type { PackageResolution } from "../kernel/packageResolution.js";
import { countedTail } from "../observability/countedTail.js";
import { meteredGateway, RecentWorkers } from "../observability/meteredGateway.js";
import { startOpenTelemetry } from "../observability/openTelemetry.js";
import { createPrometheusMetrics } from "../observability/prometheusMetrics.js";
import { registerScrapedGauges } from "../observability/scrapedGauges.js";
import { createModelCatalog } from "../providers/modelCatalog.js";
import { createProviderRouter } from "../providers/router.js";
import { ClaimedResources } from "../resources/claimedResources.js";
import { composeResources, type ResourceServices } from "../resources/services.js";
import { acpRuntimePorts } from "../runtime/acp/acpBrainStep.js";
import { outcomeHeartbeatFromEnv } from "../runtime/outcomeStep.js";
import { DEFAULT_RETRY_POLICY } from "../runtime/retryPolicy.js";
import { createSandboxes, reportContainerTier, reportMissingBubblewrap } from "../sandbox/sandboxes.js";
import { eraseHostWorkspaces } from "../sandbox/workspaces.js";
import { MergedAdminAudit } from "../stores/sql/mergedAdminAudit.js";
import { KNOWN_MIGRATIONS } from "../stores/sql/migrations/index.js";
import { BUILD_WORKER_TOKEN_ENV, MIN_BUILD_WORKER_TOKEN_LENGTH } from "../worker/buildWorkerWire.js";
import { MIN_WORKER_TOKEN_LENGTH } from "../worker/transportWire.js";
import { Worker } from "../worker/workerLoop.js";
import { EXECUTION_DEFAULTS } from "../worker/workerOptions.js";
import type { SessionPins } from "./controlParts.js";
import { type ApiKeySource, type ControlPlane, linkedControl, openLocalControl } from "./controlPlane.js";
import { deploymentWebhooks } from "./deploymentWebhooks.js";
import { metricsTokenFrom } from "./metricsToken.js";
import { outboundFor, pushOutboundFor } from "./outbound.js";
import { assertCanListen } from "./portProbe.js";
import { prepareDataDir } from "./startupKeys.js";
import { openStorage } from "./storage.js";
import { testSchedulerClock } from "./testSchedulerClock.js";
import type { UpOptions } from "./upOptions.js";

/** The in-process workers' id; their claims are owned by `local.<incarnation>/<slot>`. */
const LOCAL_WORKER_ID = "local";

export interface RunningServer {
  /** Empty when the server does not listen (`listen: false`, the embedded runtime). */
  url: string;
  /** Null when the database's bootstrap key was minted elsewhere (another replica's first start). */
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  /** Which database holds the authority (no password). */
  storage: string;
  app: FastifyInstance;
  /** The application services every edge calls (the in-process edge included). */
  services: EdgeServices;
  /** The live tail of one session, in process (what every protocol's stream formats). */
  openTail(
    workspaceId: string,
    sessionId: string,
    options: TailOpenOptions,
  ): Promise<AsyncIterable<TailItem>>;
  stop(): Promise<void>;
}

/**
 * The all-in-one composition: Control + Coordinator + in-process Workers on one SQLite file, or on
 * PostgreSQL when a database URL is given (`storage.ts` picks). It wires the same ports a split
 * deployment uses; nothing here is a shortcut around them.
 */
export async function startAllInOne(
  options: UpOptions,
  logger: Logger = pino({ level: "info" }),
): Promise<RunningServer> {
  const dataDir = resolve(options.dataDir);
  const clock = options.clock ?? systemClock;
  // Every connection made for users (MCP, token endpoints, validation probes); a bad entry stops start-up.
  const outbound = outboundFor(options.allowPrivateHosts, options.env);
  // Push notifications to client webhooks, with the operator's push allow-list (a bad entry stops start-up too).
  const pushOutbound = pushOutboundFor(options.allowPushHosts, options.env);
  // The operator's ceiling on content in this process's spans (its in-process workers'); a bad value stops start-up.
  const traceContent = traceContentCeiling(options.env);
  const metricsToken = metricsTokenFrom(options.env);
  // Connection bounds that contradict each other stop start-up here, before storage is opened.
  checkConnectionLimits(connectionLimitsWith(options.connections));
  // How an erasure reclaims the old row versions it leaves (PostgreSQL); a bad value stops start-up.
  const erasureVacuum = erasureVacuumFromEnv(options.env);
  const listen = options.listen !== false;
  // Before anything is created in the data dir: a busy port must not leave one behind.
  if (listen) await assertCanListen(options.host, options.port);
  const split = options.control;
  // A split Coordinator holds no master key at all: Control seals and opens for it.
  const { found, retiredKeys } = prepareDataDir(dataDir, options.env, logger, !split);
  const storage = await openStorage(
    { dataDir, databaseUrl: options.databaseUrl, poolSize: options.dbPoolSize },
    clock,
    logger,
  );
  // This server's own registry: several servers in one process never share counts.
  const metrics = createPrometheusMetrics();
  // Which `acp:<runtime>` models exist here: Control checks publications, the model list shows them.
  const acpRuntimes = options.acpRuntimes ?? acpRuntimeCatalog();
  // The harnesses this process's worker launches live here between the runs that follow them.
  const acp = acpRuntimePorts(acpRuntimes);
  // The Coordinator's side of registration and of custody's pins: Control's, in process or over the link.
  const registrar = new LocalRegistrar(storage.coordinator.catalog, clock);
  const sessionPins: SessionPins = {
    get: async (workspaceId, sessionId) =>
      (await storage.coordinator.sessions.get(workspaceId, sessionId))?.credentialPins ?? null,
    advance: async (workspaceId, sessionId, pins) => {
      await storage.coordinator.sessions.updateCredentialPins?.(workspaceId, sessionId, pins);
    },
  };
  const controlLink = split
    ? new LinkClient({ baseUrl: split.url, token: split.token, peer: "Control" })
    : null;
  let control: ControlPlane;
  let resources: ResourceServices;
  // Publications pin custom skills through this; so does a split Control, over the link.
  const skillVersions: SkillVersionResolver = {
    resolve: (workspaceId, skillId, version) =>
      resources.skills.resolveVersion(workspaceId, skillId, version),
  };
  try {
    // First: a bad limit in the environment (AWAKEN_SKILL_MAX_BYTES…) stops start-up here.
    resources = composeResources({
      stores: storage.resources,
      blobs: storage.blobs,
      clock,
      env: options.env,
      outbound,
      // Control's, restricted to repository tokens (in process, or over the link): read at use.
      sealer: {
        seal: (identity, fields) => control.repoSealer.seal(identity, fields),
        openField: (identity, sealed, field) => control.repoSealer.openField(identity, sealed, field),
      },
    });
    control = controlLink
      ? linkedControl(controlLink, clock)
      : await openLocalControl({
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
          revocations: storage.revocations,
          skillVersions,
          acpRuntimes,
          logger,
        });
    if (options.workerToken !== undefined)
      checkWorkerToken(options.workerToken, control.apiKey, split?.token);
    if (options.buildWorkerToken !== undefined)
      checkBuildWorkerToken(options.buildWorkerToken, [control.apiKey, split?.token, options.workerToken]);
  } catch (error) {
    await storage.close();
    throw error;
  }
  const { apiKey, apiKeySource } = control;
  const remoteWorkers = options.workerToken ? new RecentWorkers(() => clock.now()) : null;
  registerScrapedGauges(metrics, storage, clock, remoteWorkers);
  // Traces over OTLP when the standard variables name an endpoint; otherwise no span is ever made.
  const tracing = startOpenTelemetry(options.env, "awaken") ?? undefined;
  // Commits made through this process hand their facts to its tails (read-free when contiguous).
  const committed = new InProcessCommittedFactsFeed();
  const ports: CoordinatorPorts = {
    ...storage.coordinator,
    signals: storage.signals,
    evidence: new InProcessLiveEvidenceBus(),
    committed,
    ...(tracing ? { tracing } : {}),
    ...(storage.handOff ? { handOff: storage.handOff } : {}),
  };

  const { iam, agents, vaults, credentials, custody } = control;
  const tierPolicy = {
    allowWeakerTiers: options.allowWeakerTiers === true,
    // The container tier's images: AWAKEN_ALLOWED_CONTAINER_IMAGES (kernel/containerImages.ts).
    allowedContainerImages: allowedContainerImages(options.env),
  };
  const environments = new EnvironmentService(ports.environments, clock, tierPolicy);
  const workQueue = new WorkQueueService(
    ports.workQueue,
    ports.environments,
    clock,
    DEFAULT_LEASE_LIMITS,
    ports.sessions,
  );
  const environmentKeys = new EnvironmentKeyService(ports.environmentKeys, ports.environments, clock);
  const workspaceRoot = join(dataDir, "workspaces");
  // Session resources mounted into this host's sandboxes (files, skills, memory stores), outside
  // every writable workspace; a run's RunResources answer under its claim (claimedResources.ts).
  const mountArea = join(dataDir, "mounts");
  const runResources = new ClaimedResources({
    services: resources,
    blobs: storage.blobs,
    heldRun: (runId, owner, epoch) => storage.runSessions.heldRun(runId, owner, epoch, clock.now()),
  });
  const sandboxes = createSandboxes(
    workspaceRoot,
    options.env,
    options.sandboxEgress,
    tierPolicy.allowWeakerTiers,
    // Repository clones obey the same address policy as every connection made for users.
    outbound.policy,
  );
  // A session's workspace lives as long as the session: in-process workers share this host, so its
  // deletion removes the workspace at once (remote workers' hosts are not reached: see docs).
  // Workspace quotas the operator set: admission refuses new work past them (never a session's truth).
  const quotas = options.quotas ? new WorkspaceQuotas(options.quotas, storage.quotaUsage, clock) : undefined;
  // Revisions' frozen package resolutions: recorded by the first worker that prepares a revision.
  // Container images derived from (base, frozen resolution): demanded when a resolution is frozen,
  // built by build workers (their own token), run by digest once ready.
  const imageBuilds = new ImageBuildService(ports.imageBuilds, clock, options.imageBuildLeaseMs);
  const packageResolutions = new PackageResolutionRecords(ports.environments, clock, imageBuilds);
  const sessions = new SessionService(
    ports,
    clock,
    workQueue,
    async (sessionId) => {
      await sandboxes.destroy(sessionId).catch((error: unknown) => {
        logger.warn({ sessionId, err: error }, "could not delete the session's workspace");
      });
      await rm(join(mountArea, sessionId), { recursive: true, force: true }).catch(() => {});
    },
    custody,
    // Packages are prepared on this host (the in-process workers') before the session exists,
    // from the revision's frozen resolution (made here and recorded when it is the first). A
    // derived image carries its npm and pip packages: only the resolution its build needs is made,
    // unless nothing froze (no build then: the run uses the base as named, and these packages).
    async (packages, revision, { derivedImage }) => {
      const preparer = sandboxes.packages;
      if (!preparer) return;
      const frozen = {
        recorded: () => packageResolutions.recorded(revision),
        record: (resolution: PackageResolution) => packageResolutions.record(revision, resolution),
      };
      if (derivedImage && resolutionBuildsImage(await preparer.freeze(packages, frozen))) return;
      await preparer.prepare(packages, frozen);
    },
    tierPolicy,
    resources.sessionResources,
    quotas,
  );
  // An erasure deletes the erased sessions' workspaces on this host, as a session's deletion does;
  // remote workers' hosts are not reached, nor other replicas' (on PostgreSQL any replica's
  // in-process workers may hold one), and the answer counts those sessions as not reached.
  const erasedWorkspaces: ErasedSessionWorkspaces = {
    erase: async (sessionIds) => {
      const here = await eraseHostWorkspaces(sandboxes, workspaceRoot, sessionIds, (sessionId, error) =>
        logger.warn({ sessionId, err: error }, "could not delete an erased session's workspace"),
      );
      // Their mounted resources too (memory snapshots are the subject's data).
      for (const sessionId of sessionIds)
        await rm(join(mountArea, sessionId), { recursive: true, force: true }).catch(() => {});
      const remote =
        options.workerToken !== undefined || options.workers === 0 || options.databaseUrl !== undefined;
      return { removed: here.removed, failed: here.failed, notReached: remote ? here.absent : 0 };
    },
  };
  const pinner = new RegisteredAgentPinner(agents, skillVersions, acpRuntimes);
  const entry = new SessionEntryService({
    pinner,
    sessions,
    sessionRecords: ports.sessions,
    environments,
    environmentRecords: ports.environments,
    names: ports.sessionNames,
    clock,
  });
  const providers = createProviderRouter(options.env);
  // Deployments: every replica that serves the Coordinator runs the scheduler (an instant fires once).
  const schedulingPolicy = schedulingPolicyFromEnv(options.env);
  const deploymentClock = testSchedulerClock(options.env, clock);
  const deployments = new DeploymentService({
    store: storage.deployments,
    entry,
    pinner,
    environments: ports.environments,
    inputs: deploymentSessionInputs(() => services),
    clock: deploymentClock,
    warn: (message, error) => logger.warn({ component: "deployments", err: error }, message),
    changes: deploymentWebhooks(
      () => webhooks,
      (message, error) => logger.warn({ component: "webhooks", err: error }, message),
    ),
  });
  const scheduler = new DeploymentScheduler(
    storage.deployments,
    deployments,
    schedulingPolicy,
    deploymentClock,
    logger.child({ component: "scheduler" }),
  );

  const tail = countedTail(
    new StoreSessionTail({
      history: ports.history,
      signals: ports.signals,
      evidence: ports.evidence,
      committed,
      pollMs: options.streamPollMs ?? 1_000,
    }),
    metrics,
  );
  let ready = false;
  let draining = false;
  const workers: Worker[] = [];
  // Push configs' tokens are sealed like vault credentials: opened only for a delivery.
  const pushStore = sealedPushStore(storage.push, control.pushSealer);
  const dreams = new DreamService({
    store: storage.dreams,
    memory: storage.resources.memory,
    memoryLimits: resources.memory.limits,
    entry,
    sessions,
    sessionRecords: ports.sessions,
    history: ports.history,
    dreamer: new DreamerAgents({ agents, names: ports.sessionNames, clock }),
    clock,
  });
  const dreamSweep = new DreamSweep(dreams, clock, (error) =>
    logger.warn({ component: "dreams", err: error }, "could not bring dreams up to their sessions"),
  );
  // MCP tunnels: tokens sealed by Control's sealer (`tunnel:` identities only, read at use); the
  // relay carries in-process runs' MCP traffic over the connectors that dial this process.
  const tunnelRelay = new TunnelRelay(ports.tunnels);
  const tunnels = new TunnelService(
    ports.tunnels,
    {
      seal: (identity, fields) => control.tunnelSealer.seal(identity, fields),
      openField: (identity, sealed, field) => control.tunnelSealer.openField(identity, sealed, field),
    },
    clock,
    tunnelRelay,
  );
  const webhookTargets = new WebhookTargets(pushOutbound);
  const webhookVocabulary = { created: SESSION_CREATED, of: sessionEventsOf, body: webhookEventBody };
  // Webhook endpoints share the push outbox, its deliverer and the push address policy.
  const webhooks = new WebhookService({
    store: storage.webhooks,
    vocabulary: webhookVocabulary,
    sealer: control.pushSealer,
    refusal: (url) => webhookTargets.refusal(url),
    clock,
    woken: () => pusher.wake(),
  });
  const services: EdgeServices = {
    iam,
    agents,
    environments,
    imageBuilds,
    sessions,
    entry,
    usage: { reader: storage.quotaUsage, limitsOf: (workspaceId) => quotas?.limitsOf(workspaceId) ?? null },
    environmentKeys,
    workQueue,
    vaults,
    credentials,
    credentialOpens: control.credentialOpens,
    // Split, the coordinator audits its own changes (environments, erasures) in its own store.
    adminAudit: split
      ? new MergedAdminAudit([control.adminAudit, storage.control.adminAudit])
      : control.adminAudit,
    workers: new WorkerRoster(
      storage.workerRoster,
      {
        inProcess: () => {
          const worker = workers[0];
          return worker ? { identity: worker.identity, slots: options.workers } : null;
        },
        remoteSeen: () => remoteWorkers?.seen() ?? [],
        // Remote workers serve every workspace: only the installation's admins see the idle ones.
        showsIdleRemotes: (workspaceId) => workspaceId === DEFAULT_WORKSPACE_ID,
      },
      clock,
      `${LOCAL_WORKER_ID}.`,
    ),
    sessionChanges: new SessionChangeFeed(
      ports.signals,
      storage.workspaceThreads,
      DEFAULT_SESSION_CHANGE_FEED,
      clock,
    ),
    clock,
    stream: { history: ports.history, pingMs: options.ssePingMs },
    tail,
    models: createModelCatalog(options.env, clock, acpRuntimes.list()),
    // A config set here has its first notification waiting: the deliverer looks at once.
    push: {
      store: wakingOnSubscribe(pushStore, () => pusher.wake()),
      targets: webhookTargets,
    },
    webhooks,
    resources,
    deployments,
    dreams,
    tunnels,
    dataSubjects: {
      erasure: new SubjectErasureService(
        ports.erasure,
        () => clock.now(),
        (now) => newId("ersr", now),
        {
          workspaces: erasedWorkspaces,
          vacuum: erasureVacuum,
          warn: (message, error) => logger.warn({ err: error }, message),
        },
      ),
      consents: control.consents,
    },
    userProfiles: control.userProfiles,
  };
  const pusher = new A2aPusher({
    store: pushStore,
    outbound: pushOutbound,
    history: (threadId, afterSeq) => readTypedHistory(ports.history, threadId, afterSeq),
    clock,
    pacing: { ...DEFAULT_PUSH_PACING, ...options.push },
    log: logger.child({ component: "push" }),
    counted: (outcome) => metrics.pushDelivery(outcome),
    onAnyThreadCommitted: (listener) => ports.signals.onAnyThreadCommitted(listener),
    webhooks: new WebhookSessionFollower({
      store: storage.webhooks,
      vocabulary: webhookVocabulary,
      history: (threadId, afterSeq) => readTypedHistory(ports.history, threadId, afterSeq),
      clock,
    }),
  });
  const app = createHttpServer(
    services,
    {
      logger,
      bodyLimitBytes: 32 * 1024 * 1024,
      connections: options.connections,
      openApi: true,
      userProfileActions: services.userProfiles,
      metricsToken,
      isReady: () => ready,
      readiness: readinessProbe({
        appliedMigrations: () => storage.appliedMigrations(),
        knownMigrations: KNOWN_MIGRATIONS,
        workers: () => workers[0]?.state ?? null,
        draining: () => draining,
        ...(remoteWorkers ? { remoteWorkers: () => remoteWorkers.count() } : {}),
        clock,
        // A split Coordinator without Control cannot authenticate anybody: a balancer should know.
        ...(controlLink ? { control: (timeoutMs: number) => controlLink.ready(timeoutMs) } : {}),
      }),
      metrics,
      tracing,
      // Every replica that listens serves the Console; the embedded runtime has no HTTP to serve it on.
      ...(listen ? { console: loadConsoleAssets(options.consoleDir ?? BUILT_CONSOLE_DIR) } : {}),
      // A split Coordinator serves Control its catalog registration and the sessions' pins.
      controlLink: split
        ? {
            token: split.token,
            services: linkServices(COORDINATOR_METHODS, { registrar, sessionPins, skillVersions }),
          }
        : undefined,
      // Build workers: their own token; they claim image builds and nothing else.
      buildWorkers: options.buildWorkerToken
        ? {
            builds: imageBuilds,
            token: options.buildWorkerToken,
            resolution: (resolutionId: string) => imageBuilds.resolution(resolutionId),
          }
        : undefined,
      workerTransport: options.workerToken
        ? {
            gateway: meteredGateway(localWorkerGateway(ports, control.consents), metrics, "remote", (owner) =>
              remoteWorkers?.saw(owner),
            ),
            token: options.workerToken,
            leaseMs: options.leaseMs,
            pollMs: 50,
            // Remote last-mile holders get the same custody as in-process ones, behind a live
            // claim check (edge/worker-transport/credentialRoute.ts says why this is acceptable).
            credentials: {
              custody,
              runSession: (runId: string) => storage.runSessions.sessionOf(runId),
            },
            // A remote run's resources: the same claim-scoped clients as an in-process run, behind
            // the same live-claim check (edge/worker-transport/resourceRoutes.ts).
            resources: {
              resources: runResources,
              runSession: (runId: string) => storage.runSessions.sessionOf(runId),
            },
            // A remote run's MCP requests through a tunnel: the relay, behind the same claim check.
            tunnels: {
              relay: tunnelRelay,
              runSession: (runId: string) => storage.runSessions.sessionOf(runId),
            },
            // Revisions' frozen package resolutions: a remote worker reads or records its run's.
            packageResolutions: {
              records: packageResolutions,
              runSession: (runId: string) => storage.runSessions.sessionOf(runId),
              sessionRevision: async (workspaceId: string, sessionId: string) => {
                const session = await ports.sessions.get(workspaceId, sessionId);
                return session
                  ? { environmentId: session.environmentId, revision: session.environmentRevision }
                  : null;
              },
            },
            runAgent: (runId: string) => storage.runSessions.agentOf(runId),
            // A remote worker's dropped presence connection ends its leases after a short grace.
            presence: {
              connections: new WorkerConnections({
                lapseClaimsOf: (ownerPrefix, notRenewedAfter) =>
                  ports.dispatch.lapseClaimsOf(ownerPrefix, notRenewedAfter),
                dispatchReady: (runId) => ports.signals.dispatchReady(runId),
                clock,
                log: logger.child({ component: "worker-transport" }),
              }),
              localIdPrefix: `${LOCAL_WORKER_ID}.`,
            },
          }
        : undefined,
    },
    EDGE_ADAPTERS,
  );
  serveTunnelUpgrades(app.server, tunnelRelay, logger.child({ component: "tunnels" }));

  // The previous process on this SQLite file is gone (it held the file's lock): its runs resume
  // now. Its workers' owners are `local.<incarnation>/<slot>`; were a remote worker named "local",
  // its claim would lapse too, and the fence would refuse its commits (safe, one wasted attempt).
  const lapsed = (await storage.lapseClaimsOf?.(`${LOCAL_WORKER_ID}.`)) ?? 0;
  if (lapsed > 0)
    logger.info({ component: "worker", lapsed }, `resuming ${lapsed} run(s) the previous process held`);
  if (options.workers > 0) {
    const worker = new Worker(
      meteredGateway(localWorkerGateway(ports, control.consents), metrics, "local"),
      {
        providers,
        sandboxes,
        clock,
        retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
        crashBudget: 5,
        modelIdleTimeoutMs: options.modelIdleTimeoutMs,
        outcomeHeartbeatMs: outcomeHeartbeatFromEnv(options.env),
        log: logger.child({ component: "worker" }),
        credentials: custody,
        outbound,
        // In process the run is this process's own: its workspace's tunnels, no claim check needed.
        tunnels: { fetch: (claim, url, init) => tunnelRelay.fetch(claim.workspaceId, url, init) },
        resources: runResources,
        mountArea,
        packageResolutions,
        acp,
        metrics,
        ...(tracing ? { tracing } : {}),
        traceContent,
      },
      {
        id: LOCAL_WORKER_ID,
        concurrency: options.workers,
        leaseMs: options.leaseMs,
        pollMs: options.workerPollMs ?? EXECUTION_DEFAULTS.pollMs,
        drainMs: options.drainMs ?? EXECUTION_DEFAULTS.drainMs,
      },
    );
    worker.start();
    workers.push(worker);
  }

  let url = "";
  if (listen) {
    await app.listen({ host: options.host, port: options.port });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : options.port;
    url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
  }
  await storage.lapsePushLeases?.();
  pusher.start();
  scheduler.start();
  dreamSweep.start();
  control.start();
  ready = true;
  // Models run where runs run: without workers of its own, this process calls none.
  if (options.workers > 0)
    for (const line of providers.describe()) logger.info({ component: "providers" }, line);
  else
    logger.info(
      { component: "providers" },
      "no model runs in this process (--workers 0): the workers that claim its runs call the providers their own environment names",
    );
  await reportMissingBubblewrap(logger);
  await reportContainerTier(logger, options.env);

  let stopping: Promise<void> | null = null;
  return {
    url,
    apiKey,
    apiKeySource,
    storage: storage.description,
    app,
    services,
    openTail: async (workspaceId, sessionId, tailOptions) =>
      tail.open(await sessions.get(workspaceId, sessionId), tailOptions),
    stop: () => {
      stopping ??= (async () => {
        // /readyz answers 503 "draining" while the HTTP server still serves during the drain.
        draining = true;
        ready = false;
        await Promise.all(workers.map((w) => w.stop()));
        await pusher.stop();
        await scheduler.stop();
        await dreamSweep.stop();
        await control.stop();
        await acp.harnesses.close();
        await sandboxes.close();
        tunnelRelay.closeAll();
        await app.close();
        await outbound.close();
        await pushOutbound.close();
        await storage.close();
        await tracing?.flush().catch(() => {});
        control.zeroKeys();
      })();
      return stopping;
    },
  };
}

/** A weak token, or one that is also an API key, would let API clients act as workers: refuse. */
function checkWorkerToken(token: string, apiKey: string | null, controlToken: string | undefined): void {
  if (token.length < MIN_WORKER_TOKEN_LENGTH)
    throw new Error(`AWAKEN_WORKER_TOKEN must be at least ${MIN_WORKER_TOKEN_LENGTH} characters`);
  if (token === apiKey) throw new Error("AWAKEN_WORKER_TOKEN must differ from the API key");
  if (token === controlToken) throw new Error("AWAKEN_WORKER_TOKEN must differ from AWAKEN_CONTROL_TOKEN");
}

/** The build worker token: long enough, and unlike every other token this server holds. */
function checkBuildWorkerToken(token: string, others: readonly (string | null | undefined)[]): void {
  if (token.length < MIN_BUILD_WORKER_TOKEN_LENGTH)
    throw new Error(`${BUILD_WORKER_TOKEN_ENV} must be at least ${MIN_BUILD_WORKER_TOKEN_LENGTH} characters`);
  if (others.includes(token))
    throw new Error(
      `${BUILD_WORKER_TOKEN_ENV} must differ from the API key, the control token and the worker token`,
    );
}
