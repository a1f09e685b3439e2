import { type CaptureConsents, claimCapturesContent } from "../kernel/contentCapture.js";
import type { WorkerTransport } from "../worker/ports.js";
import type { SubjectErasureStore } from "./dataSubjects.js";
import { derivedImageBase } from "./imageBuilds/imageBuildService.js";
import type { ImageBuildStore } from "./imageBuilds/ports.js";
import type { Activation, CoordinatorPorts, IdleSlot } from "./ports.js";
import { type RunHandOff, relaySlot } from "./runHandOff.js";

/**
 * The coordinator side of the worker transport in one process: direct calls into the coordinator's claim, fence and history
 * ports. Commits still travel as CommitOperations and are checked by the fence like remote ones.
 *
 * Each claim decides here whether the slice's spans may carry content (`captureContent`: the
 * session asked, and its data subject consented as of this claim), for in-process and remote
 * workers alike; `consents` is Control's consent port (absent: a subject never consented).
 */
export function localWorkerGateway(ports: CoordinatorPorts, consents?: CaptureConsents): WorkerTransport {
  return {
    claim: async (owner, leaseMs, _idle, prefer) => {
      const claimed = await ports.dispatch.claim(owner, leaseMs, prefer);
      return claimed && withCaptureDecision(claimed, consents, ports.erasure, ports.imageBuilds);
    },
    renew: (runId, owner, epoch, leaseMs) => ports.dispatch.renew(runId, owner, epoch, leaseMs),
    release: async (runId, owner, epoch) => {
      await ports.dispatch.release(runId, owner, epoch);
      // A run handed back on shutdown is queued again: wake the other replicas' idle slots now.
      ports.signals.dispatchReady(runId);
    },
    commit: async (op) => {
      const result = await ports.dispatch.commit(op);
      if (result.ok && !result.duplicate) {
        const { versionAfter, committedAt } = result.receipt;
        // Only after the commit returned: the tails of this process take the facts as committed.
        ports.committed?.publish({ threadId: op.threadId, versionAfter, facts: op.facts, committedAt });
        ports.signals.threadCommitted(op.threadId, versionAfter);
        // A child's answer landed on its parent's history; spawned children and a resumed parent
        // are runs to claim.
        const answeredVersion = result.receipt.answeredVersion;
        if (op.answer && answeredVersion !== undefined) {
          const { parentThreadId, facts } = op.answer;
          ports.committed?.publish({
            threadId: parentThreadId,
            versionAfter: answeredVersion,
            facts,
            committedAt,
          });
          ports.signals.threadCommitted(parentThreadId, answeredVersion);
          ports.signals.dispatchReady();
        }
        for (const spawn of op.spawns ?? []) ports.signals.dispatchReady(spawn.runId);
      }
      return result;
    },
    readThread: (threadId, afterSeq) => ports.history.readThread(threadId, afterSeq),
    publish: (sessionId, evidence) => ports.evidence.publish(sessionId, evidence),
    onWork: (listener) => ports.signals.onDispatchReady(listener),
    signalsEveryRun: true,
    onRunCancelled: (listener) => ports.signals.onRunCancelled(listener),
    ...(ports.handOff ? { acceptHandOffs: handOffsThrough(ports, ports.handOff, consents) } : {}),
  };
}

/**
 * Lends the worker's idle slots to the input ledger's appends (`RunHandOff`). A run handed off
 * reaches its slot as a claimed one does: through the capture decision. Should that decision fail,
 * the run is handed back (queued, and announced) and the slot waits again.
 */
function handOffsThrough(
  ports: CoordinatorPorts,
  handOff: RunHandOff,
  consents: CaptureConsents | undefined,
): (reserve: () => IdleSlot | null) => () => void {
  return (reserve) =>
    handOff.connect(() => {
      const slot = reserve();
      if (!slot) return null;
      return relaySlot(slot, (claimed) => {
        withCaptureDecision(claimed, consents, ports.erasure, ports.imageBuilds).then(
          (activation) => slot.deliver(activation),
          async () => {
            await ports.dispatch.release(claimed.runId, claimed.owner, claimed.epoch).catch(() => {});
            slot.release();
            ports.signals.dispatchReady(claimed.runId);
          },
        );
      });
    });
}

/**
 * The activation as workers get it: the capture request replaced by the decision, the data subject
 * by when it was last erased (a worker's workspace from before then goes: workspaces.ts), and the
 * revision's ready derived image added.
 */
async function withCaptureDecision(
  claimed: Activation,
  consents: CaptureConsents | undefined,
  erasures: Pick<SubjectErasureStore, "lastErasedAt">,
  builds: Pick<ImageBuildStore, "forRevision">,
): Promise<Activation> {
  const { captureRequest, dataSubject, ...activation } = claimed;
  const captureContent = await claimCapturesContent(activation.workspaceId, captureRequest, consents);
  const erasedAt = dataSubject ? await erasures.lastErasedAt(activation.workspaceId, dataSubject) : null;
  // The revision's derived image, once its build is ready: the run's container runs exactly it. Only
  // a revision that derives one is looked up, so a claim of any other run costs no statement more.
  const derives = derivedImageBase(activation.environment.config) !== null;
  const build = derives
    ? await builds.forRevision(activation.environment.id, activation.environment.revision)
    : null;
  const builtImage = build?.state === "ready" ? build.imageReference : null;
  return {
    ...activation,
    captureContent,
    ...(erasedAt === null ? {} : { workspaceErasedAt: erasedAt }),
    ...(builtImage === null || builtImage === undefined ? {} : { builtImage }),
  };
}
