import type { CommittedFact } from "../../coordinator/facts.js";
import type { OutcomeState } from "../../coordinator/outcomes.js";
import type { EventListQuery, HistoryReader, Page } from "../../coordinator/ports.js";
import type { SqlHistoryReader } from "../sql/sqlHistoryReader.js";
import { headSync, readThreadSync } from "./syncReads.js";
import type { SyncWriter } from "./syncWriter.js";

/**
 * History on SQLite: the tail reads every stream and worker make after each commit run
 * synchronously; the filtered, paginated list uses the dialect-neutral reader.
 */
export class SqliteHistoryReader implements HistoryReader {
  constructor(
    private readonly writer: SyncWriter,
    private readonly fallback: SqlHistoryReader,
  ) {}

  readThread(threadId: string, afterSeq: number, limit = 10_000): Promise<CommittedFact[]> {
    return this.writer.read((sql) => readThreadSync(sql, threadId, afterSeq, limit));
  }

  threadVersion(threadId: string): Promise<number> {
    return this.writer.read((sql) => headSync(sql, threadId)?.version ?? 0);
  }

  outcomes(threadIds: readonly string[]): Promise<Map<string, OutcomeState[]>> {
    return this.fallback.outcomes(threadIds);
  }

  listEvents(sessionId: string, threadId: string, query: EventListQuery): Promise<Page<CommittedFact>> {
    return this.fallback.listEvents(sessionId, threadId, query);
  }
}
