import { useMemo } from "react";
import { useSessionRecord } from "../hooks/useSessionRecord.js";
import { transcriptRows } from "../projection/transcript.js";
import { Transcript } from "./Transcript.js";

const NO_ASKS: ReadonlySet<string> = new Set();

/**
 * A child thread's transcript: its own committed events, read and followed through the SDK's
 * per-thread routes. Read-only: the session's input and decisions go to its primary thread.
 */
export function ThreadTranscript({
  sessionId,
  threadId,
  threadNames,
}: {
  sessionId: string;
  threadId: string;
  threadNames: ReadonlyMap<string, string>;
}) {
  const record = useSessionRecord(sessionId, threadId);
  const rows = useMemo(() => transcriptRows(record.history.events), [record.history.events]);
  return (
    <div data-testid="thread-transcript" data-thread-id={threadId}>
      {record.problem && !record.live && (
        <p role="alert" className="problem">
          Stream: {record.problem}
        </p>
      )}
      {!record.loaded && <p>Reading the thread's history…</p>}
      <Transcript
        rows={rows}
        previews={record.history.previews}
        asks={NO_ASKS}
        onDecide={() => undefined}
        deciding={false}
        threadNames={threadNames}
      />
    </div>
  );
}
