import type { CommitOperation, CommitResult } from "../coordinator/commitOperation.js";
import type { CommittedFact } from "../coordinator/facts.js";
import type { Activation, IdleSlot, LiveEvidence } from "../coordinator/ports.js";

/**
 * Everything a worker may ask of the coordinator. In the all-in-one server this is an in-process
 * adapter; a remote worker gets an HTTP client with the same shape. There is no database here.
 */
export interface WorkerTransport {
  /**
   * `idle`: the slot's last slice settled its run, so nothing it knows of is claimable; a transport
   * whose claim waits on the coordinator may then wait for a signal before it claims at all.
   */
  claim(owner: string, leaseMs: number, idle?: boolean, prefer?: string): Promise<Activation | null>;
  renew(runId: string, owner: string, epoch: number, leaseMs: number): Promise<boolean>;
  release(runId: string, owner: string, epoch: number): Promise<void>;
  /**
   * `sessionId` names the session the operation's run belongs to: previews of that session
   * published before must reach streams before the operation's facts. Without it a transport
   * holds the commit until every pending preview went out.
   */
  commit(op: CommitOperation, sessionId?: string): Promise<CommitResult>;
  readThread(threadId: string, afterSeq: number): Promise<CommittedFact[]>;
  publish(sessionId: string, evidence: LiveEvidence): void;
  /**
   * Wake-ups only lower latency; the worker polls regardless. Each names the run that turned
   * claimable, or null when it does not know which (something may have).
   */
  onWork(listener: (runId: string | null) => void): () => void;
  /**
   * True when `onWork` hears every run that becomes claimable (in one process with the
   * coordinator), so a slot whose run settled can wait for a signal instead of claiming into an
   * empty queue. A remote transport's claim waits on the coordinator's side instead.
   */
  readonly signalsEveryRun?: boolean;
  onRunCancelled(listener: (runId: string) => void): () => void;
  /**
   * In one process with the coordinator: `reserve` lends the worker's idle slots to input appends,
   * which claim the run they start or resume for one in their own statement (`IdleSlot`). Returns
   * the function that stops lending them. Absent: every run waits for a slot's claim.
   */
  acceptHandOffs?(reserve: () => IdleSlot | null): () => void;
}
