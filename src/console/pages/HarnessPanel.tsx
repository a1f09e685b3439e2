import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useApi } from "../api/apiContext.js";
import { awaken } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { harnessView, stageLabel } from "../projection/harnessLaunches.js";
import { formatTime } from "./formatTime.js";

/** While a run is launching its harness the stages are re-read this often (they are not streamed). */
const LAUNCH_POLL_MS = 1_000;
const SETTLED: ReadonlySet<string> = new Set(["ready", "failed"]);

/**
 * The session's ACP harness Brain: its runtime, current stage (a failure's reason as text), each
 * launch's stages with their times, the harness's own name and version, and whether it reloaded
 * its session. Shown for an `acp:` agent, or for any session whose history has stages. Re-read as
 * the page re-reads the session (on each status change), and polled while a run is launching.
 */
export function HarnessPanel({
  sessionId,
  model,
  running,
}: {
  sessionId: string;
  model: string | undefined;
  /** Whether the session's run is active now. */
  running: boolean;
}) {
  const { client } = useApi();
  const named = model?.startsWith("acp:") === true;
  const stages = useQuery({
    // Under the session's key the page's re-read on each status event re-reads the stages too; any
    // other agent's session is asked once (its history may still hold stages), outside that key.
    queryKey: named ? ["session", sessionId, "harness"] : ["harness-once", sessionId],
    enabled: model !== undefined,
    staleTime: named ? 0 : Number.POSITIVE_INFINITY,
    queryFn: ({ signal }) => awaken.harnessStages(client, sessionId, signal),
    refetchInterval: (query) =>
      named && running && !SETTLED.has(query.state.data?.current ?? "") ? LAUNCH_POLL_MS : false,
  });
  const view = useMemo(() => harnessView(stages.data?.data ?? []), [stages.data]);
  if (!named && view.launches.length === 0) return null;
  const { current, ready } = view;
  return (
    <div className="card" data-testid="harness" data-stage={current?.stage ?? "none"}>
      <h2>Brain</h2>
      <dl>
        <dt>Runtime</dt>
        <dd className="mono" data-testid="harness-runtime">
          {view.runtime ?? model?.replace(/^acp:/, "") ?? "…"}
        </dd>
        <dt>Stage</dt>
        <dd>
          <span
            data-testid="harness-stage"
            className={current?.stage === "failed" ? "status problem" : "status"}
          >
            {current ? current.stage : stages.isPending ? "…" : "not launched yet"}
          </span>
          {current?.stage === "failed" && current.error && (
            <p className="problem" data-testid="harness-error">
              {current.error}
            </p>
          )}
        </dd>
        {ready && (
          <>
            <dt>Harness</dt>
            <dd data-testid="harness-agent">
              {ready.agent_info?.name ?? "unnamed"}
              {ready.agent_info?.version ? ` ${ready.agent_info.version}` : ""}
            </dd>
            <dt>Session</dt>
            <dd>
              {ready.loaded ? "reloaded" : "new"}{" "}
              {ready.acp_session_id && <span className="mono muted">{ready.acp_session_id}</span>}
            </dd>
          </>
        )}
      </dl>
      {view.launches.map((launch, index) => (
        <details key={launch.stages[0]?.processed_at ?? index} open={index === view.launches.length - 1}>
          <summary>
            Launch {index + 1}: {launch.last.stage}
          </summary>
          <ol className="plain" data-testid="harness-launch">
            {launch.stages.map((stage) => (
              <li key={`${stage.processed_at}-${stage.stage}-${stage.attempt ?? 0}`}>
                {stageLabel(stage)} <span className="muted">{formatTime(stage.processed_at)}</span>
              </li>
            ))}
          </ol>
        </details>
      ))}
      {stages.isError && (
        <p role="alert" className="problem">
          {problemOf(stages.error)}
        </p>
      )}
    </div>
  );
}
