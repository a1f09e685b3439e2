import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { useApi } from "../api/apiContext.js";
import { problemOf } from "../api/client.js";
import type { Session } from "../api/wire.js";
import { useSessionActions } from "../hooks/useSessionActions.js";
import { useSessionRecord } from "../hooks/useSessionRecord.js";
import { useSessionThreads } from "../hooks/useSessionThreads.js";
import { outcomeHistory } from "../projection/outcomes.js";
import { describeRunState, pendingApprovals, type RunState, runState } from "../projection/runState.js";
import {
  type FirstToolLatency,
  firstToolLatency,
  type McpConnectionUse,
  mcpConnections,
} from "../projection/sessionFacts.js";
import { flattenTree, threadTree } from "../projection/threadTree.js";
import { type ModelRow, transcriptRows } from "../projection/transcript.js";
import { workflowRuns } from "../projection/workflowRuns.js";
import { Link } from "../router.js";
import { BudgetPanel } from "./BudgetPanel.js";
import { formatTime } from "./formatTime.js";
import { HarnessPanel } from "./HarnessPanel.js";
import { OutcomesPanel } from "./OutcomesPanel.js";
import { RunTracePanel } from "./RunTracePanel.js";
import { SessionResources } from "./SessionResources.js";
import { sandboxOf } from "./sandboxOf.js";
import { ThreadTranscript } from "./ThreadTranscript.js";
import { ThreadTree } from "./ThreadTree.js";
import { Transcript } from "./Transcript.js";
import { WorkflowRunsPanel } from "./WorkflowRunsPanel.js";

/** A session: its runs and pins, its threads, workflow runs and outcomes, and one thread's transcript. */
export function SessionPage({ sessionId, threadId }: { sessionId: string; threadId: string | null }) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const record = useSessionRecord(sessionId);
  const session = useQuery({
    queryKey: ["session", sessionId],
    queryFn: ({ signal }) => client.beta.sessions.retrieve(sessionId, {}, { signal }),
  });
  const { events, previews } = record.history;
  const state = useMemo(() => runState(events), [events]);
  const rows = useMemo(() => transcriptRows(events), [events]);
  const asks = useMemo(() => new Set(pendingApprovals(state).map((call) => call.id)), [state]);
  const actions = useSessionActions(sessionId);
  // Threads, workflow runs and outcomes are announced on the primary thread's history.
  const threads = useSessionThreads(sessionId);
  const tree = useMemo(() => threadTree(threads.data ?? [], events), [threads.data, events]);
  const threadLines = useMemo(() => flattenTree(tree), [tree]);
  const workflows = useMemo(() => workflowRuns(events), [events]);
  const outcomes = useMemo(() => outcomeHistory(events), [events]);
  const primaryId = threads.data?.find((thread) => thread.parent_thread_id === null)?.id;
  const childShown = threadId !== null && threadId !== primaryId ? threadId : null;
  const threadNames = useMemo(
    () => new Map(threadLines.map(({ node }) => [node.id, node.agentName])),
    [threadLines],
  );
  const shownName = threadNames.get(childShown ?? "");

  // The session's status, usage and updated time change with its status events: re-read it then.
  const statusEvents = useMemo(() => events.filter((e) => e.type.startsWith("session.")).length, [events]);
  useEffect(() => {
    if (statusEvents > 0) void queryClient.invalidateQueries({ queryKey: ["session", sessionId] });
  }, [statusEvents, queryClient, sessionId]);

  const environmentId = session.data?.environment_id;
  const environment = useQuery({
    queryKey: ["environment", environmentId],
    enabled: environmentId !== undefined,
    queryFn: ({ signal }) => client.beta.environments.retrieve(environmentId!, {}, { signal }),
  });
  const declared = session.data?.agent.mcp_servers;
  const mcp = useMemo(
    () => mcpConnections(events, declared?.map((server) => server.name) ?? []),
    [events, declared],
  );
  const firstTool = useMemo(() => firstToolLatency(events), [events]);

  const failure = state.phase === "ended" && state.error !== null ? state.error : null;
  const models = rows.filter((row): row is ModelRow => row.kind === "model");
  return (
    <section aria-labelledby="session-title">
      <p>
        <Link to="sessions">← Sessions</Link>
      </p>
      <h1 id="session-title" className={session.data?.title ? undefined : "mono"}>
        {session.data?.title || sessionId}
      </h1>
      {session.isError && (
        <p role="alert" className="problem">
          {problemOf(session.error)}
        </p>
      )}
      {record.problem && !record.live && (
        <p role="alert" className="problem">
          Stream: {record.problem}
        </p>
      )}
      <div className="panels">
        <RunPanel state={state} session={session.data} live={record.live} />
        {session.data && <PinsPanel session={session.data} environmentName={environment.data?.name} />}
        <ModelsPanel models={models} />
        <HarnessPanel
          sessionId={sessionId}
          model={session.data?.agent.model.id}
          running={ACTIVE_PHASES.includes(state.phase)}
        />
        <SandboxPanel
          sandbox={
            environment.data
              ? sandboxOf(environment.data).join(" · ")
              : environment.isError
                ? `not readable with this key (${problemOf(environment.error)})`
                : null
          }
          firstTool={firstTool}
        />
        <McpPanel connections={mcp} />
        {session.data && <BudgetPanel session={session.data} />}
        <SessionResources sessionId={sessionId} skills={session.data?.agent.skills ?? []} />
      </div>
      {failure && (
        <div className="card failure" role="alert" data-testid="failure">
          <h2>The run failed</h2>
          <p>
            <strong>{failure.type}</strong>: {failure.message}
          </p>
          <p className="muted">The transcript below is exactly what was committed before the failure.</p>
        </div>
      )}
      {!childShown && <RunTracePanel sessionId={sessionId} events={events} />}
      <WorkflowRunsPanel workflows={workflows} />
      <OutcomesPanel current={session.data?.outcome_evaluations ?? []} history={outcomes} />
      {session.data && session.data.status !== "terminated" && (
        <Actions sessionId={sessionId} active={ACTIVE_PHASES.includes(state.phase)} />
      )}
      {(threadLines.length > 1 || childShown) && (
        <ThreadTree sessionId={sessionId} roots={tree} shown={childShown} runs={workflows.runs} />
      )}
      {threads.isError && (
        <p role="alert" className="problem">
          Threads: {problemOf(threads.error)}
        </p>
      )}
      {childShown ? (
        <>
          <h2>
            Transcript of {shownName ?? "thread"} <span className="mono muted">{childShown}</span>
          </h2>
          <ThreadTranscript
            key={childShown}
            sessionId={sessionId}
            threadId={childShown}
            threadNames={threadNames}
          />
        </>
      ) : (
        <>
          <h2>Transcript</h2>
          {!record.loaded && <p>Reading the history…</p>}
          <Transcript
            rows={rows}
            previews={previews}
            asks={asks}
            onDecide={(toolUseId, allow, denyMessage) =>
              actions.confirm.mutate({ toolUseId, allow, ...(denyMessage ? { denyMessage } : {}) })
            }
            deciding={actions.confirm.isPending}
            threadNames={threadNames}
          />
        </>
      )}
      {actions.confirm.isError && (
        <p role="alert" className="problem">
          {problemOf(actions.confirm.error)}
        </p>
      )}
    </section>
  );
}

function RunPanel({
  state,
  session,
  live,
}: {
  state: RunState;
  session: Session | undefined;
  live: boolean;
}) {
  return (
    <div className="card" data-testid="run-state" data-phase={state.phase}>
      <h2>Current run</h2>
      <p className="run-line">{describeRunState(state)}</p>
      <dl>
        <dt>Session status</dt>
        <dd>{session ? <span className={`status status-${session.status}`}>{session.status}</span> : "…"}</dd>
        <dt>Live</dt>
        <dd>{live ? "streaming" : "not connected"}</dd>
        {session && (
          <>
            <dt>Tokens</dt>
            <dd>
              {session.usage.input_tokens ?? 0} in · {session.usage.output_tokens ?? 0} out
            </dd>
            <dt>Last activity</dt>
            <dd>{formatTime(session.updated_at)}</dd>
          </>
        )}
      </dl>
    </div>
  );
}

/** What the session froze at creation: ids and versions only, never a secret. */
function PinsPanel({ session, environmentName }: { session: Session; environmentName: string | undefined }) {
  return (
    <div className="card" data-testid="pins">
      <h2>Pinned</h2>
      <dl>
        <dt>Agent</dt>
        <dd>
          {session.agent.name} <span className="mono">{session.agent.id}</span> version{" "}
          {session.agent.version}
        </dd>
        <dt>Model</dt>
        <dd className="mono">{session.agent.model.id}</dd>
        <dt>Environment</dt>
        <dd>
          {environmentName ?? "…"} <span className="mono">{session.environment_id}</span>
        </dd>
        <dt>Vaults</dt>
        <dd className="mono">
          {session.vault_ids.length > 0
            ? session.vault_ids.map((vaultId) => <VaultCredentials key={vaultId} vaultId={vaultId} />)
            : "none"}
        </dd>
        <dt>MCP servers</dt>
        <dd>
          {session.agent.mcp_servers.length > 0
            ? session.agent.mcp_servers.map((server) => server.name).join(", ")
            : "none"}
        </dd>
        <dt>Resources</dt>
        <dd>{session.resources.length > 0 ? session.resources.map((r) => r.type).join(", ") : "none"}</dd>
      </dl>
    </div>
  );
}

/** A pinned vault's credentials by id and kind: what the session's runs may open, never the material. */
function VaultCredentials({ vaultId }: { vaultId: string }) {
  const { client } = useApi();
  const credentials = useQuery({
    queryKey: [`vault-${vaultId}`, "list"],
    queryFn: async ({ signal }) =>
      (await client.beta.vaults.credentials.list(vaultId, { limit: 100 }, { signal })).data,
  });
  return (
    <div data-testid="pinned-vault">
      <Link to={`vaults/${encodeURIComponent(vaultId)}`}>{vaultId}</Link>
      {credentials.data && credentials.data.length > 0 && (
        <ul className="plain">
          {credentials.data.map((credential) => (
            <li key={credential.id}>
              {credential.id} <span className="muted">({credential.auth.type})</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ModelsPanel({ models }: { models: ModelRow[] }) {
  const totals = models.reduce(
    (sum, row) => ({
      input: sum.input + (row.ended?.inputTokens ?? 0),
      output: sum.output + (row.ended?.outputTokens ?? 0),
      failed: sum.failed + (row.ended?.isError ? 1 : 0),
    }),
    { input: 0, output: 0, failed: 0 },
  );
  const providers = [...new Set(models.map((row) => `${row.provider ?? "?"} / ${row.model ?? "?"}`))];
  return (
    <div className="card" data-testid="models">
      <h2>Model requests</h2>
      <dl>
        <dt>Requests</dt>
        <dd>
          {models.length}
          {totals.failed > 0 ? ` (${totals.failed} failed)` : ""}
        </dd>
        <dt>Provider / model</dt>
        <dd className="mono">{providers.length > 0 ? providers.join(", ") : "none yet"}</dd>
        <dt>Tokens</dt>
        <dd>
          {totals.input} in · {totals.output} out
        </dd>
      </dl>
    </div>
  );
}

/** A run in one of these phases can be interrupted. */
const ACTIVE_PHASES: readonly RunState["phase"][] = ["queued", "running", "rescheduling", "awaiting"];

function SandboxPanel({
  sandbox,
  firstTool,
}: {
  sandbox: string | null;
  firstTool: FirstToolLatency | null;
}) {
  const ms = (value: number | null) => (value === null ? "?" : `${value} ms`);
  return (
    <div className="card" data-testid="sandbox">
      <h2>Sandbox</h2>
      <dl>
        <dt>Environment</dt>
        <dd>{sandbox ?? "…"}</dd>
        <dt>First tool</dt>
        <dd>
          {firstTool
            ? `${firstTool.name}: ${ms(firstTool.fromRunStartMs)} after the run started, answered in ${ms(firstTool.useToResultMs)}` +
              (firstTool.approvalWaitMs !== null
                ? ` after ${ms(firstTool.approvalWaitMs)} waiting for approval`
                : "")
            : "no built-in tool used yet"}
        </dd>
      </dl>
    </div>
  );
}

function McpPanel({ connections }: { connections: McpConnectionUse[] }) {
  return (
    <div className="card" data-testid="mcp">
      <h2>MCP connections</h2>
      {connections.length === 0 ? (
        <p className="muted">The agent declares no MCP server.</p>
      ) : (
        <dl>
          {connections.map((connection) => (
            <div key={connection.server} className="contents">
              <dt>{connection.server}</dt>
              <dd>
                {connection.calls} calls
                {connection.failedCalls > 0 ? `, ${connection.failedCalls} failed` : ""}
                {connection.connectionError && (
                  <span className="problem"> — {connection.connectionError}</span>
                )}
              </dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}

function Actions({ sessionId, active }: { sessionId: string; active: boolean }) {
  const { sendMessage, interrupt, archive } = useSessionActions(sessionId);
  const [text, setText] = useState("");
  const onSend = (event: FormEvent) => {
    event.preventDefault();
    const message = text.trim();
    if (message === "") return;
    sendMessage.mutate(message, { onSuccess: () => setText("") });
  };
  const problem = sendMessage.error ?? interrupt.error ?? archive.error;
  return (
    <div className="card actions">
      <form onSubmit={onSend} className="send">
        <label>
          Message
          <textarea value={text} onChange={(event) => setText(event.target.value)} rows={2} />
        </label>
        <button type="submit" disabled={sendMessage.isPending}>
          Send
        </button>
      </form>
      <div className="buttons">
        <button type="button" disabled={!active || interrupt.isPending} onClick={() => interrupt.mutate()}>
          Interrupt
        </button>
        <button
          type="button"
          className="secondary"
          disabled={archive.isPending}
          onClick={() => {
            if (window.confirm("Archive this session? It stops accepting input.")) archive.mutate();
          }}
        >
          Archive
        </button>
      </div>
      {problem && (
        <p role="alert" className="problem">
          {problemOf(problem)}
        </p>
      )}
    </div>
  );
}
