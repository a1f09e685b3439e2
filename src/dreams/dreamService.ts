/**
 * Dreams (SDK `beta.dreams`): create, retrieve, list, cancel, archive. A dream runs as an internal
 * session on the workspace's dreamer agent, whose one user message is the dream's request (built
 * here, once); the session's run is claimed, fenced and resumed like any run. A dream's status
 * follows that session's committed facts: whenever a dream is read (and by the sweep), a dream whose
 * session answered is completed by writing its output store and the dream's end in one transaction,
 * so a crash anywhere leaves either no output store or the whole one, and never two.
 */

import { DATA_SUBJECT_METADATA_KEY } from "../coordinator/dataSubjects.js";
import { decodeCommitted } from "../coordinator/factCodec.js";
import { EMPTY_USAGE } from "../coordinator/facts.js";
import type { CommittedTypedFact } from "../coordinator/factVocabulary.js";
import type { HistoryReader, SessionRecord, SessionStore } from "../coordinator/ports.js";
import type { SessionEntry } from "../coordinator/sessionEntry.js";
import type { SessionService } from "../coordinator/sessionService.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError, invalid, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { Page } from "../kernel/pagination.js";
import { type DreamRequest, dreamRequestText } from "../providers/dreaming.js";
import type { MemoryLimits } from "../resources/memory/memoryLimits.js";
import type { MemoryStore, MemoryStoreRecord } from "../resources/memory/ports.js";
import type { DreamerAgents } from "./dreamerAgent.js";
import { DREAM_LIMITS } from "./dreamLimits.js";
import { dreamSessionState } from "./dreamOutcome.js";
import { checkDreamOutput } from "./dreamOutput.js";
import { dreamMemories, sessionTranscript } from "./dreamRequest.js";
import {
  type DreamInput,
  type DreamListQuery,
  type DreamOutputBehavior,
  type DreamRecord,
  type DreamStore,
  type DreamTarget,
  type DreamUsage,
  FINAL_DREAM_STATUSES,
} from "./ports.js";

export interface DreamServiceDeps {
  store: DreamStore;
  memory: MemoryStore;
  memoryLimits: MemoryLimits;
  entry: Pick<SessionEntry, "start">;
  sessions: Pick<SessionService, "send" | "delete">;
  sessionRecords: Pick<SessionStore, "get">;
  history: HistoryReader;
  dreamer: Pick<DreamerAgents, "refFor">;
  clock: Clock;
}

export interface CreateDreamCommand {
  memoryStoreId: string;
  sessionIds: string[];
  model: string;
  instructions: string | null;
  outputBehavior: DreamOutputBehavior;
}

/** A dream as the wire shows it: its record and its usage (its session's, while that can change). */
export interface DreamView {
  dream: DreamRecord;
  usage: DreamUsage;
}

export class DreamService {
  constructor(private readonly deps: DreamServiceDeps) {}

  async create(workspaceId: string, cmd: CreateDreamCommand): Promise<DreamView> {
    const { deps } = this;
    const source = await deps.memory.getStore(workspaceId, cmd.memoryStoreId);
    if (!source) throw notFound("memory store", cmd.memoryStoreId);
    if (source.archivedAt !== null) {
      throw invalid(
        `memory store ${JSON.stringify(cmd.memoryStoreId)} is archived; a dream reads only a live store`,
      );
    }
    const sessionIds = [...cmd.sessionIds].sort();
    const sessions: SessionRecord[] = [];
    for (const id of sessionIds) {
      const session = await deps.sessionRecords.get(workspaceId, id);
      if (!session) throw notFound("session", id);
      sessions.push(session);
    }
    const subject = dataSubjectOfAll(sessions);
    const behavior = cmd.outputBehavior;
    if (behavior.type === "update_existing") {
      if (behavior.memory_store_id !== source.id) {
        throw invalid(
          "output_behavior.memory_store_id must be the memory store of the memory_store input: update_existing writes the store the dream reads",
        );
      }
      const holder = await deps.store.holderOf(workspaceId, source.id);
      if (holder !== null) throw held(source.id, holder);
    }
    const snapshot = (await deps.memory.snapshot(workspaceId, source.id)) ?? [];
    const bytes = snapshot.reduce((sum, m) => sum + Buffer.byteLength(m.content, "utf8"), 0);
    if (snapshot.length > DREAM_LIMITS.maxSourceMemories || bytes > DREAM_LIMITS.maxSourceBytes) {
      throw invalid(
        `memory store ${JSON.stringify(source.id)} holds ${snapshot.length} memories (${bytes} bytes); a dream reads at most ${DREAM_LIMITS.maxSourceMemories} memories and ${DREAM_LIMITS.maxSourceBytes} bytes`,
      );
    }
    // One session after another: up to 100 reads, never the whole pool at once.
    const transcripts: DreamRequest["sessions"] = [];
    for (const s of sessions) {
      transcripts.push({ id: s.id, transcript: await sessionTranscript(deps.history, s.threadId) });
    }
    const request: DreamRequest = {
      instructions: cmd.instructions,
      memories: dreamMemories(snapshot),
      sessions: transcripts,
    };
    const now = deps.clock.now();
    const id = newId("drm", now);
    // The session first: a dream row always names its session, so every dream can be followed.
    const session = await deps.entry.start({
      workspaceId,
      agent: await deps.dreamer.refFor(workspaceId, cmd.model),
      title: `Dream ${id}`,
      // The dream's session holds copies of the transcripts: it is about their data subject, so
      // erasing that subject erases this session's content too.
      metadata: { awaken_dream_id: id, ...(subject ? { [DATA_SUBJECT_METADATA_KEY]: subject } : {}) },
      initialInputs: [{ kind: "message", content: [{ type: "text", text: dreamRequestText(request) }] }],
    });
    const dream: DreamRecord = {
      id,
      workspaceId,
      status: "pending",
      inputs: [
        { type: "memory_store", memory_store_id: source.id },
        { type: "sessions", session_ids: sessionIds },
      ],
      instructions: cmd.instructions,
      model: { id: cmd.model, speed: "standard" },
      outputBehavior: cmd.outputBehavior,
      outputStoreId: null,
      sessionId: session.id,
      error: null,
      usage: null,
      createdAt: now,
      endedAt: null,
      archivedAt: null,
    };
    const created = await deps.store.create(dream);
    if (!created.ok) {
      // Another dream took the store between the check and the write: this one's session goes.
      await deps.sessions.delete(workspaceId, session.id);
      throw held(source.id, created.heldBy);
    }
    return { dream, usage: EMPTY_USAGE };
  }

  async get(workspaceId: string, id: string): Promise<DreamView> {
    const dream = await this.deps.store.get(workspaceId, id);
    if (!dream) throw notFound("dream", id);
    return this.refresh(dream);
  }

  async list(workspaceId: string, query: DreamListQuery): Promise<Page<DreamView>> {
    const page = await this.deps.store.list(workspaceId, query);
    const data: DreamView[] = [];
    for (const dream of page.data) data.push(await this.refresh(dream));
    return { data, nextCursor: page.nextCursor };
  }

  /**
   * Stops a pending or running dream: the dream is `canceled` first (so its session's answer, should
   * it still land, never becomes an output store), then its session's run is interrupted. The status
   * that counts is the recorded one: a dream whose session has answered but whose output store is
   * not written yet has not completed, and the cancel wins. A dream that completes while the cancel
   * is made is answered as it ended (SDK: "unless the dream reached completed or failed first").
   */
  async cancel(workspaceId: string, id: string): Promise<DreamView> {
    const dream = await this.deps.store.get(workspaceId, id);
    if (!dream) throw notFound("dream", id);
    if (dream.status === "completed" || dream.status === "failed") {
      throw invalid(
        `dream ${JSON.stringify(id)} is ${dream.status}; only a pending or running dream can be canceled`,
      );
    }
    if (dream.status !== "canceled") await this.deps.store.cancel(workspaceId, id, this.deps.clock.now());
    const after = await this.get(workspaceId, id);
    if (after.dream.status === "canceled" && after.dream.sessionId !== null) {
      // Repeated on a repeated cancel: a no-op once nothing runs.
      await this.deps.sessions.send(
        workspaceId,
        after.dream.sessionId,
        [{ kind: "interrupt", onlyWhileWorking: true }],
        {},
      );
    }
    return after;
  }

  async archive(workspaceId: string, id: string): Promise<DreamView> {
    const { dream } = await this.get(workspaceId, id);
    if (!FINAL_DREAM_STATUSES.includes(dream.status)) {
      throw invalid(`dream ${JSON.stringify(id)} is ${dream.status}; cancel it before archiving it`);
    }
    if (dream.archivedAt === null) await this.deps.store.archive(workspaceId, id, this.deps.clock.now());
    return this.get(workspaceId, id);
  }

  /** Brings every dream not yet ended up to its session (a dream nobody polls still completes). */
  async sweep(limit = 50): Promise<void> {
    for (const { workspaceId, id } of await this.deps.store.active(limit)) {
      const dream = await this.deps.store.get(workspaceId, id);
      if (dream) await this.refresh(dream);
    }
  }

  /** The dream as its session now stands: ends it (completing it with its store) when the session did. */
  private async refresh(dream: DreamRecord): Promise<DreamView> {
    const { deps } = this;
    const session =
      dream.sessionId === null ? null : await deps.sessionRecords.get(dream.workspaceId, dream.sessionId);
    const before = session ? usageOf(session) : (dream.usage ?? EMPTY_USAGE);
    if (FINAL_DREAM_STATUSES.includes(dream.status)) {
      // A canceled dream's session may still count tokens (SDK); an ended one's usage is frozen.
      return { dream, usage: dream.status === "canceled" ? before : (dream.usage ?? before) };
    }
    const now = deps.clock.now();
    const state = session
      ? dreamSessionState(await threadFacts(deps.history, session.threadId))
      : {
          kind: "failed" as const,
          error: { type: "session_ended", message: "The dream's session is gone." },
        };
    // The session's usage is projected in the transaction that commits its facts: read after the
    // facts, it counts at least every model request they show (read before, it may miss the answer's).
    let usage = before;
    if (session && (state.kind === "answered" || state.kind === "failed")) {
      const after = await deps.sessionRecords.get(dream.workspaceId, session.id);
      if (after) usage = usageOf(after);
    }
    if (state.kind === "running" && dream.status === "pending") {
      await deps.store.markRunning(dream.workspaceId, dream.id);
    } else if (state.kind === "answered") {
      const checked = checkDreamOutput(state.text, deps.memoryLimits);
      if (checked.ok) {
        const target: DreamTarget =
          dream.outputBehavior.type === "update_existing"
            ? { kind: "existing", storeId: dream.outputBehavior.memory_store_id }
            : { kind: "new", store: await this.outputStore(dream, now) };
        await deps.store.complete(
          dream.workspaceId,
          dream.id,
          {
            target,
            memories: checked.memories.map((m) => ({
              id: newId("mem", now),
              versionId: newId("memver", now),
              ...m,
            })),
            usage,
          },
          deps.memoryLimits,
          now,
        );
      } else {
        await deps.store.fail(dream.workspaceId, dream.id, checked.error, usage, now);
      }
    } else if (state.kind === "failed") {
      await deps.store.fail(dream.workspaceId, dream.id, state.error, usage, now);
    } else {
      return { dream, usage };
    }
    const fresh = await deps.store.get(dream.workspaceId, dream.id);
    return { dream: fresh ?? dream, usage: fresh?.usage ?? usage };
  }

  /** The new store a completed dream fills: named after its source, in the dream's workspace. */
  private async outputStore(dream: DreamRecord, now: number): Promise<MemoryStoreRecord> {
    const sourceId = dream.inputs.find((i) => i.type === "memory_store")?.memory_store_id ?? "";
    const source = await this.deps.memory.getStore(dream.workspaceId, sourceId);
    const name = `${source?.name ?? "memory store"} (dreamed)`.slice(0, 255);
    return {
      id: newId("memstore", now),
      workspaceId: dream.workspaceId,
      name,
      description: `Written by dream ${dream.id} from memory store ${sourceId}.`,
      metadata: { awaken_dream_id: dream.id },
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
  }
}

/** SDK: a 409 `conflict_error` naming the other dream; the SDK does not retry it. */
function held(storeId: string, holder: string): AwakenError {
  return new AwakenError(
    "dream_store_held",
    `memory store ${JSON.stringify(storeId)} is being written by dream ${JSON.stringify(holder)} (update_existing); wait for that dream to end or cancel it, then retry`,
  );
}

/** The one data subject the sessions are about (null: none); sessions of two subjects are refused. */
function dataSubjectOfAll(sessions: SessionRecord[]): string | null {
  const subjects = [...new Set(sessions.flatMap((s) => (s.dataSubject === null ? [] : [s.dataSubject])))];
  if (subjects.length > 1) {
    throw invalid(
      "the sessions are about different data subjects; a dream may read the sessions of one data subject at a time (and sessions about none)",
    );
  }
  return subjects[0] ?? null;
}

function usageOf(session: SessionRecord): DreamUsage {
  const { inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens } = session.usage;
  return { inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens };
}

async function threadFacts(history: HistoryReader, threadId: string): Promise<CommittedTypedFact[]> {
  const facts: CommittedTypedFact[] = [];
  let after = 0;
  for (;;) {
    const page = await history.readThread(threadId, after, 500);
    facts.push(...page.map(decodeCommitted));
    if (page.length < 500) return facts;
    after = page[page.length - 1]?.seq ?? after;
  }
}

export type { DreamInput };
