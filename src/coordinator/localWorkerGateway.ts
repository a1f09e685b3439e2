import type { WorkerTransport } from "../worker/ports.js";
import type { CoordinatorPorts } from "./ports.js";

/**
 * The coordinator side of the worker transport in one process: direct calls into the coordinator's claim, fence and history
 * ports. Commits still travel as CommitOperations and are checked by the fence like remote ones.
 */
export function localWorkerGateway(ports: CoordinatorPorts): WorkerTransport {
  return {
    claim: (owner, leaseMs) => ports.dispatch.claim(owner, leaseMs),
    renew: (runId, owner, epoch, leaseMs) => ports.dispatch.renew(runId, owner, epoch, leaseMs),
    release: async (runId, owner, epoch) => {
      await ports.dispatch.release(runId, owner, epoch);
      // A run handed back on shutdown is queued again: wake the other replicas' idle slots now.
      ports.signals.dispatchReady();
    },
    commit: async (op) => {
      const result = await ports.dispatch.commit(op);
      if (result.ok && !result.duplicate) {
        const { versionAfter, committedAt } = result.receipt;
        // Only after the commit returned: the tails of this process take the facts as committed.
        ports.committed?.publish({ threadId: op.threadId, versionAfter, facts: op.facts, committedAt });
        ports.signals.threadCommitted(op.threadId, versionAfter);
      }
      return result;
    },
    readThread: (threadId, afterSeq) => ports.history.readThread(threadId, afterSeq),
    publish: (sessionId, evidence) => ports.evidence.publish(sessionId, evidence),
    onWork: (listener) => ports.signals.onDispatchReady(listener),
    signalsEveryRun: true,
    onRunCancelled: (listener) => ports.signals.onRunCancelled(listener),
  };
}
