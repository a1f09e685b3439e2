import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef } from "react";
import { prettyJson } from "../projection/contentText.js";
import type { Preview } from "../projection/liveHistory.js";
import type { ToolRow, TranscriptRow } from "../projection/transcript.js";
import { DecideButtons } from "./DecideButtons.js";
import { formatTime } from "./formatTime.js";

type Item = { key: string; row: TranscriptRow } | { key: string; preview: Preview };

interface TranscriptProps {
  rows: readonly TranscriptRow[];
  previews: readonly Preview[];
  /** Tool calls waiting for an operator's decision. */
  asks: ReadonlySet<string>;
  onDecide(toolUseId: string, allow: boolean, denyMessage?: string): void;
  deciding: boolean;
  /** Agent names by thread id, for messages between threads whose event names only the thread. */
  threadNames?: ReadonlyMap<string, string>;
}

/**
 * The committed history as rows, then the previews still streaming. Virtualized: only the rows in
 * view are in the DOM, so a session of thousands of events scrolls like a short one. It follows the
 * end while the operator is at the end.
 */
export function Transcript({ rows, previews, asks, onDecide, deciding, threadNames }: TranscriptProps) {
  const items: Item[] = [
    ...rows.map((row) => ({ key: row.id, row })),
    ...previews.map((preview) => ({ key: `preview-${preview.id}`, preview })),
  ];
  const scroller = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 72,
    overscan: 8,
    getItemKey: (index) => items[index]!.key,
  });
  const count = items.length;
  useEffect(() => {
    if (atEnd.current && count > 0) virtualizer.scrollToIndex(count - 1, { align: "end" });
  }, [count, virtualizer]);
  return (
    <div
      ref={scroller}
      className="transcript"
      data-testid="transcript"
      data-rows={rows.length}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the scrolling log must be reachable by keyboard to scroll it
      tabIndex={0}
      role="log"
      aria-label="Transcript"
      onScroll={(event) => {
        const el = event.currentTarget;
        atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
      }}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {virtualizer.getVirtualItems().map((virtual) => {
          const item = items[virtual.index]!;
          return (
            <div
              key={virtual.key}
              ref={virtualizer.measureElement}
              data-index={virtual.index}
              className="row-slot"
              style={{ transform: `translateY(${virtual.start}px)` }}
            >
              {"row" in item ? (
                <Row
                  row={item.row}
                  ask={asks.has(item.row.id)}
                  onDecide={onDecide}
                  deciding={deciding}
                  threadNames={threadNames}
                />
              ) : (
                <PreviewRow preview={item.preview} />
              )}
            </div>
          );
        })}
      </div>
      {items.length === 0 && <p className="muted">Nothing committed yet.</p>}
    </div>
  );
}

function PreviewRow({ preview }: { preview: Preview }) {
  return (
    <div className="row preview" data-testid="preview" data-event-id={preview.id}>
      <div className="row-head">
        <span className="who">{preview.type === "agent.thinking" ? "Thinking" : "Agent"}</span>
        <span className="muted">streaming…</span>
      </div>
      {preview.text && <p className="text">{preview.text}</p>}
    </div>
  );
}

interface RowProps {
  row: TranscriptRow;
  ask: boolean;
  onDecide: TranscriptProps["onDecide"];
  deciding: boolean;
  threadNames: TranscriptProps["threadNames"];
}

function Row({ row, ask, onDecide, deciding, threadNames }: RowProps) {
  const common = { "data-testid": "transcript-row", "data-kind": row.kind, "data-event-id": row.id };
  const time = row.at ? <time dateTime={row.at}>{formatTime(row.at)}</time> : null;
  switch (row.kind) {
    case "message":
      return (
        <div {...common} data-role={row.role} className={`row message ${row.role}`}>
          <div className="row-head">
            <span className="who">
              {row.role === "user" ? "User" : row.role === "agent" ? "Agent" : "System"}
            </span>
            {time}
          </div>
          <p className="text">{row.text}</p>
        </div>
      );
    case "thread_message": {
      const peer = row.peerName ?? threadNames?.get(row.peerThread) ?? row.peerThread;
      return (
        <div {...common} data-direction={row.direction} className="row message thread">
          <div className="row-head">
            <span className="who">{row.direction === "sent" ? `To ${peer}` : `From ${peer}`}</span>
            {time}
          </div>
          <p className="text">{row.text}</p>
        </div>
      );
    }
    case "thinking":
      return (
        <div {...common} className="row thinking">
          <div className="row-head">
            <span className="who">Thinking</span>
            {time}
          </div>
        </div>
      );
    case "tool":
      return <ToolCallRow row={row} common={common} ask={ask} onDecide={onDecide} deciding={deciding} />;
    case "model":
      return (
        <div {...common} className="row model">
          <div className="row-head">
            <span className="who">Model request</span>
            <span className="mono">
              {row.provider ?? "?"} / {row.model ?? "?"}
            </span>
            <span>
              {row.ended
                ? `${row.ended.isError ? "failed" : "done"} · ${row.ended.inputTokens} in · ${row.ended.outputTokens} out`
                : "in flight"}
            </span>
            {time}
          </div>
        </div>
      );
    case "status":
      return (
        <div {...common} className="row status-row">
          <span>{row.text}</span> {time}
        </div>
      );
    case "error":
      return (
        <div {...common} className="row error" role="note">
          <div className="row-head">
            <span className="who">Error</span>
            <span className="mono">{row.errorType}</span>
            <span>({row.retryStatus})</span>
            {time}
          </div>
          <p className="text">{row.message}</p>
        </div>
      );
    case "other":
      return (
        <div {...common} className="row other">
          <span className="mono">{row.type}</span> {time}
        </div>
      );
  }
}

function ToolCallRow({
  row,
  common,
  ask,
  onDecide,
  deciding,
}: {
  row: ToolRow;
  common: Record<string, string>;
  ask: boolean;
  onDecide: TranscriptProps["onDecide"];
  deciding: boolean;
}) {
  const label =
    row.executor === "mcp"
      ? `MCP ${row.mcpServer ?? "?"} · ${row.name}`
      : row.executor === "client"
        ? `Custom tool ${row.name}`
        : row.harness
          ? `harness · ${row.name}`
          : `Tool ${row.name}`;
  const state = row.result
    ? row.result.isError
      ? "error"
      : "done"
    : row.confirmation?.result === "deny"
      ? "denied"
      : ask
        ? "awaiting approval"
        : "pending";
  return (
    <div {...common} data-tool-state={state} className={`row tool ${state.replace(" ", "-")}`}>
      <div className="row-head">
        <span className="who">{label}</span>
        {row.permission && <span className="badge">permission: {row.permission}</span>}
        <span className="badge">{state}</span>
      </div>
      <details open={ask}>
        <summary>Input</summary>
        <pre data-testid="tool-input">{prettyJson(row.input)}</pre>
      </details>
      {row.confirmation && (
        <p data-testid="tool-confirmation">
          {row.confirmation.result === "allow" ? "Allowed" : "Denied"}
          {row.confirmation.denyMessage ? `: ${row.confirmation.denyMessage}` : ""}
        </p>
      )}
      {row.result && (
        <details open>
          <summary>{row.result.isError ? "Result (error)" : "Result"}</summary>
          <pre data-testid="tool-result">{row.result.text || "(no output)"}</pre>
        </details>
      )}
      {ask && (
        <DecideButtons
          testId="decide"
          disabled={deciding}
          onDecide={(allow, message) => onDecide(row.id, allow, message)}
        />
      )}
    </div>
  );
}
