import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ThreadSpawn } from "../../coordinator/commitOperation.js";
import type { Activation, ExecutableAgentSnapshot } from "../../coordinator/ports.js";
import { spawnedAgent } from "../../coordinator/spawnableAgents.js";
import { workflowRunOfThread } from "../../coordinator/workflowIds.js";
import { BoundedCache } from "../../kernel/boundedCache.js";
import { AwakenError } from "../../kernel/errors.js";
import type { WorkerTransport } from "../../worker/ports.js";
import {
  requestSchema,
  WORKER_ROUTE_PREFIX,
  WORKER_ROUTES,
  type WorkerRequest,
  type WorkerResponse,
  type WorkerRouteName,
} from "../../worker/transportWire.js";
import { bearerTokenCheck } from "../http/bearerToken.js";
import { onReplyClosed } from "../http/closeListener.js";
import { ClaimWakeups } from "./claimWakeups.js";
import { type CredentialRouteDeps, openForRemoteHolder } from "./credentialRoute.js";
import { type PackageResolutionRouteDeps, packageResolutionForRemoteRun } from "./packageResolutionRoute.js";
import { type PresenceRouteDeps, presenceRoute } from "./presenceRoute.js";
import { type ResourceRouteContext, type ResourceRouteDeps, resourceRoutes } from "./resourceRoutes.js";
import {
  openSecretForRemoteHolder,
  type SecretRouteContext,
  secretVariablesForRemoteHolder,
} from "./secretRoute.js";
import { type TunnelRouteDeps, tunnelFetchForRemoteRun } from "./tunnelRoute.js";

export interface WorkerRouteDeps {
  /** The coordinator side of the transport (`localWorkerGateway`): same fence, same signals. */
  gateway: WorkerTransport;
  /** The shared worker token; the routes exist only when it is configured. */
  token: string;
  /** The coordinator's lease: workers learn it from `/config` and cannot choose their own. */
  leaseMs: number;
  /** How long an idle worker waits between claims after a long-poll came back empty. */
  pollMs: number;
  /**
   * Custody for remote last-mile holders (`/credentials/open`, and `/credentials/secret-variables`
   * and `/credentials/open-secret` for their sandboxes' egress proxies), behind a live-claim check.
   */
  credentials: CredentialRouteDeps;
  /**
   * A remote run's `RunResources` calls (`/resources/...`), behind the same live-claim check,
   * answered by the in-process clients. Absent: those routes refuse with a clear error.
   */
  resources?: ResourceRouteDeps | undefined;
  /** A remote run's MCP requests through a tunnel, behind the same live-claim check. Absent: refused. */
  tunnels?: TunnelRouteDeps | undefined;
  /**
   * Revisions' frozen package resolutions (`/package-resolution`), behind the same live-claim
   * check. Absent: refused, and a remote worker cannot prepare packages frozen.
   */
  packageResolutions?: PackageResolutionRouteDeps | undefined;
  /**
   * A run's pinned agent, with its roster (null: no such run). A remote worker's spawn names a
   * roster entry or defines an inline agent; the child runs what the coordinator derives from this
   * agent, never a snapshot the worker sent.
   */
  runAgent: (runId: string) => Promise<ExecutableAgentSnapshot | null>;
  /**
   * The presence stream (`/presence`): a worker's dropped connection ends its leases after a short
   * grace. Absent: a dead worker's runs wait out their leases.
   */
  presence?: Omit<PresenceRouteDeps, "renew"> | undefined;
}

/**
 * The remote worker transport: typed claim/renew/release/commit/read/evidence calls, and the
 * credential opens of remote last-mile holders (`credentialRoute.ts`, `secretRoute.ts`), authenticated
 * by the shared worker token only (an API key is never accepted here). Register inside its own
 * Fastify scope so the token hook does not touch the Managed Agents routes.
 */
export function workerTransportRoutes(app: FastifyInstance, deps: WorkerRouteDeps): void {
  const tokenMatches = bearerTokenCheck(deps.token);
  // A callback hook: an async one costs a promise and a microtask hop on every call.
  app.addHook("onRequest", (request, _reply, done) => {
    if (tokenMatches(request.headers.authorization)) done();
    else done(new AwakenError("unauthenticated", "Invalid or missing worker token (AWAKEN_WORKER_TOKEN)."));
  });

  const { gateway } = deps;
  // One subscription for every waiting claim: each dispatch signal wakes one of them.
  const wakeups = new ClaimWakeups();
  const unsubscribe = gateway.onWork((runId) => {
    if (wakeups.announce(runId)) wakeups.wakeOne();
  });
  app.addHook("onClose", async () => unsubscribe());

  if (deps.presence) {
    presenceRoute(app, {
      ...deps.presence,
      renew: (runId, owner, epoch) => gateway.renew(runId, owner, epoch, deps.leaseMs),
    });
  }
  route(app, "config", async () => ({ leaseMs: deps.leaseMs, pollMs: deps.pollMs }));
  route(app, "claim", async (body, request, reply) => {
    const client = watchClient(request, reply);
    let wakeCursor = wakeups.cursor();
    const claim = (woken = false) => {
      wakeCursor = wakeups.cursor();
      return wakeups.claim((target) => gateway.claim(body.owner, deps.leaseMs, undefined, target), woken);
    };
    // A slot back from a settled run (or an empty claim) that missed no unanswered signal waits for
    // one before it claims: a claim now would find nothing (it still claims when the wait ends).
    const waitFirst = body.waitMs > 0 && wakeups.mayWaitFirst(body.idleSince);
    let activation = waitFirst ? null : await claim();
    const deadline = Date.now() + body.waitMs;
    while (!activation && body.waitMs > 0 && !client.gone()) {
      const startedBefore = wakeups.claimsStarted;
      const woken = await wakeups.wait(Math.max(0, deadline - Date.now()), client.signal);
      // Woken for a run that the claims in flight took meanwhile: nothing is left to look for.
      if (woken && !client.gone() && !(await wakeups.worthLooking())) {
        if (Date.now() < deadline) continue;
        break;
      }
      // Woken, look again. A wait that ran out polls, unless another claim of this process started
      // meanwhile: it looked after this wait began, and runs that became claimable since came with
      // signals, so this look would find nothing either (idle slots whose waits end together poll
      // once, not each). One that found a run no signal announced may have left more like it
      // (lapsed leases come without a signal): then this one looks as well.
      const look =
        woken || wakeups.claimsStarted === startedBefore || (await wakeups.latestFoundUnannounced());
      // Nobody left to receive the answer: the signal is the next waiting claim's.
      if (client.gone()) {
        if (woken) wakeups.wakeOne();
      } else if (look) {
        activation = await claim(woken);
      }
      break;
    }
    // A worker that hung up can never receive this claim: hand it back instead of letting it lapse,
    // and let another waiting claim take it.
    if (activation && client.gone()) {
      wakeups.finished(activation.runId);
      await gateway.release(activation.runId, activation.owner, activation.epoch);
      wakeups.announce(activation.runId);
      activation = null;
      wakeups.wakeOne();
    }
    return { activation: activation && forWorker(activation), wakeCursor };
  });
  route(app, "renew", async (b) => ({
    held: await gateway.renew(b.runId, b.owner, b.epoch, deps.leaseMs),
  }));
  route(app, "release", async (b) => {
    wakeups.finished(b.runId);
    await gateway.release(b.runId, b.owner, b.epoch);
    return {};
  });
  // A commit's previews are published before it is applied, so every stream shows them before the
  // facts that end them. A retried commit (same operation, owner and epoch) repeats its body:
  // its previews are published only the first time.
  // The commits whose evidence was published: `add` is false for a key seen recently (a retry).
  const published = new BoundedCache<string, true>({ maxEntries: PUBLISHED_COMMITS_REMEMBERED });
  route(app, "commit", (b) => {
    // The slice that claimed the run is under way: a signal for the run from now on is a new one.
    wakeups.finished(b.op.runId);
    if (
      b.evidence &&
      b.evidence.length > 0 &&
      published.add(`${b.op.opId} ${b.op.owner} ${b.op.epoch}`, true)
    ) {
      for (const item of b.evidence) gateway.publish(item.sessionId, item.evidence);
    }
    const spawns = b.op.spawns ?? [];
    if (spawns.length === 0) return gateway.commit(b.op);
    return pinnedSpawns(deps.runAgent, b.op.runId, spawns).then((pinned) =>
      gateway.commit({ ...b.op, spawns: pinned }),
    );
  });
  route(app, "readThread", async (b) => ({ facts: await gateway.readThread(b.threadId, b.afterSeq) }));
  route(app, "evidence", async (b) => {
    for (const item of b.items) gateway.publish(item.sessionId, item.evidence);
    return {};
  });
  route(app, "openCredential", (b, request, reply) => {
    // The answer may carry a bearer: no cache on the way may keep it.
    reply.header("cache-control", "no-store");
    return openForRemoteHolder(
      (runId, owner, epoch, leaseMs) => gateway.renew(runId, owner, epoch, leaseMs),
      deps.leaseMs,
      deps.credentials,
      b,
      request.log,
    );
  });
  // The sandbox's `environment_variable` credentials, behind the same live-claim check.
  const secrets = (request: FastifyRequest): SecretRouteContext => ({
    renew: (runId, owner, epoch, leaseMs) => gateway.renew(runId, owner, epoch, leaseMs),
    leaseMs: deps.leaseMs,
    deps: deps.credentials,
    log: request.log,
  });
  route(app, "secretVariables", (b, request, reply) => {
    reply.header("cache-control", "no-store");
    return secretVariablesForRemoteHolder(secrets(request), b);
  });
  route(app, "openSecret", (b, request, reply) => {
    // The answer may carry a secret: no cache on the way may keep it.
    reply.header("cache-control", "no-store");
    return openSecretForRemoteHolder(secrets(request), b);
  });
  // A remote run's resources: each route checks the claim first (resourceRoutes.ts).
  const resources = (request: FastifyRequest): ResourceRouteContext => {
    if (!deps.resources) {
      throw new AwakenError("not_found", "this coordinator serves no session resources to remote workers");
    }
    return {
      renew: (runId, owner, epoch, leaseMs) => gateway.renew(runId, owner, epoch, leaseMs),
      leaseMs: deps.leaseMs,
      deps: deps.resources,
      log: request.log,
    };
  };
  route(app, "resolveResources", (b, request) => resourceRoutes.resolveResources(resources(request), b));
  route(app, "readBlob", (b, request) => resourceRoutes.readBlob(resources(request), b));
  route(app, "memorySnapshot", (b, request) => resourceRoutes.memorySnapshot(resources(request), b));
  route(app, "writeMemory", (b, request) => resourceRoutes.writeMemory(resources(request), b));
  route(app, "repositoryToken", (b, request, reply) => {
    // The answer may carry a token: no cache on the way may keep it.
    reply.header("cache-control", "no-store");
    return resourceRoutes.repositoryToken(resources(request), b);
  });
  route(app, "packageResolution", (b, request) => {
    if (!deps.packageResolutions)
      throw new AwakenError("not_found", "this coordinator keeps no package resolutions for remote workers");
    return packageResolutionForRemoteRun(
      {
        renew: (runId, owner, epoch, leaseMs) => gateway.renew(runId, owner, epoch, leaseMs),
        leaseMs: deps.leaseMs,
        deps: deps.packageResolutions,
        log: request.log,
      },
      b,
    );
  });
  route(app, "tunnelFetch", (b, request, reply) => {
    if (!deps.tunnels)
      throw new AwakenError("not_found", "this coordinator carries no MCP tunnels for remote workers");
    // The answer is an MCP server's: no cache on the way may keep it.
    reply.header("cache-control", "no-store");
    return tunnelFetchForRemoteRun(
      {
        renew: (runId, owner, epoch, leaseMs) => gateway.renew(runId, owner, epoch, leaseMs),
        leaseMs: deps.leaseMs,
        deps: deps.tunnels,
        log: request.log,
      },
      b,
    );
  });
}

/**
 * Commits carry what a model or a tool produced (a tool's input, a binary file's text), which no
 * schema of ours bounded; the cap still keeps every walker of the body far from the stack's limit.
 * A NUL there is data (stored as an escape), as it is for a worker in the server's own process.
 */
const WORKER_BODY_CONFIG = { maxBodyDepth: 256, bodyMayHoldNul: true };

function route<R extends WorkerRouteName>(
  app: FastifyInstance,
  name: R,
  handler: (
    body: WorkerRequest<R>,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => Promise<WorkerResponse<R>>,
): void {
  const spec = WORKER_ROUTES[name];
  app.post(`${WORKER_ROUTE_PREFIX}${spec.path}`, { config: WORKER_BODY_CONFIG }, async (request, reply) => {
    const parsed = requestSchema(name).safeParse(request.body ?? {});
    if (!parsed.success) {
      throw new AwakenError("invalid_request", `Invalid worker ${name} request: ${parsed.error.message}`);
    }
    return handler(parsed.data, request, reply);
  });
}

/**
 * An activation as a remote worker gets it: without what the claiming store sets for this process
 * only (the claim-wait metric's `claimableSince` and `reclaimed`, the session's `captureRequest`,
 * which the gateway has already turned into `captureContent`).
 */
function forWorker(activation: Activation): Activation {
  const { claimableSince: _since, reclaimed: _reclaimed, captureRequest: _request, ...sent } = activation;
  return sent;
}

/** Whether the client of a long-poll is still there; `signal` aborts the moment it hangs up. */
function watchClient(
  request: FastifyRequest,
  reply: FastifyReply,
): { gone: () => boolean; signal: AbortSignal } {
  const closed = new AbortController();
  // `close` before the response was written means the client went away mid long-poll.
  onReplyClosed(reply, "worker long-poll", () => {
    if (!reply.raw.writableEnded) closed.abort();
  });
  return { gone: () => closed.signal.aborted || request.raw.socket.destroyed, signal: closed.signal };
}

/** Retried commits arrive within seconds of the first attempt; this many is ample. */
const PUBLISHED_COMMITS_REMEMBERED = 10_000;

/**
 * A worker's spawns with each child's agent replaced by what the run's agent may start under that
 * request: the member's predefined agent of that name, or the inline agent derived from the run's
 * own. The worker chooses which agent, never what it is; a refused spawn fails the commit.
 */
async function pinnedSpawns(
  runAgent: WorkerRouteDeps["runAgent"],
  runId: string,
  spawns: readonly ThreadSpawn[],
): Promise<ThreadSpawn[]> {
  const parent = await runAgent(runId);
  if (parent === null) throw new AwakenError("not_found", `run ${runId} does not exist`);
  return spawns.map((spawn) => {
    const member = workflowRunOfThread(spawn.threadId) === null ? "subagents" : "workflows";
    const agent = spawnedAgent(parent, member, spawn);
    if ("refused" in agent) {
      throw new AwakenError(
        "invalid_request",
        `spawn of ${JSON.stringify(spawn.agentName.slice(0, 100))}: ${agent.refused}`,
      );
    }
    return { ...spawn, agent };
  });
}
