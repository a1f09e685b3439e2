import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import {
  awaken,
  type MemoryWriteBackOutcome,
  type RealizedResource,
  type RunResourceUsage,
} from "../api/awaken.js";
import { Link } from "../router.js";
import { formatBytes } from "./formatBytes.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

/**
 * What each run of the session actually used, oldest first, as its history records it: the files
 * (digest and mount path), memory stores and repositories it realized, the exact skill versions it
 * mounted or served, and the outcome of each memory write-back. Unlike the session's current
 * resources above, a run's record never changes. Every value is shown as text.
 */
export function SessionRunUsage({ sessionId }: { sessionId: string }) {
  const { client } = useApi();
  const pages = useCursorPages();
  // Under the session's key: the page refreshes it whenever the session's status changes.
  const usage = useQuery({
    queryKey: ["session", sessionId, "resource-usage", pages.cursor],
    queryFn: ({ signal }) => awaken.resourceUsage(client, sessionId, pages.cursor, signal),
  });
  return (
    <section data-testid="session-run-usage" aria-labelledby="run-usage-title">
      <h3 id="run-usage-title">Used by each run</h3>
      <Problem error={usage.error} />
      {usage.data?.data.length === 0 && !pages.hasPrevious && (
        <p className="muted">No run has used a resource or skill yet.</p>
      )}
      {usage.data && usage.data.data.length > 0 && (
        <ol className="plain">
          {usage.data.data.map((run) => (
            <li
              key={`${run.run_id ?? "run"}:${run.realized_at}`}
              data-testid="run-usage"
              data-run-id={run.run_id ?? ""}
            >
              <RunUsage run={run} />
            </li>
          ))}
        </ol>
      )}
      <Pager pages={pages} nextPage={usage.data?.next_page} />
    </section>
  );
}

function RunUsage({ run }: { run: RunResourceUsage }) {
  return (
    <>
      <div>
        <span className="badge">run</span> <span className="mono">{run.run_id ?? "—"}</span>{" "}
        <span className="muted">
          {formatTime(run.realized_at)}, {run.mode === "mounted" ? "mounted in the sandbox" : "as tools"}
        </span>
      </div>
      <ul className="plain">
        {run.resources.map((resource) => (
          <li key={realizedKey(resource)} data-testid="run-usage-resource" data-type={resource.type}>
            <RealizedLine resource={resource} />
          </li>
        ))}
        {run.skills.map((skill) => (
          <li key={`${skill.skill_id}@${skill.version}`} data-testid="run-usage-skill">
            <span className="badge">skill</span>{" "}
            <Link
              to={`skills/${encodeURIComponent(skill.skill_id)}/versions/${encodeURIComponent(skill.version)}`}
            >
              {skill.name}
            </Link>{" "}
            <span className="muted">version {skill.version}</span>
            {skill.path && (
              <>
                {" "}
                at <span className="mono">{skill.path}</span>
              </>
            )}
          </li>
        ))}
      </ul>
      {run.memory_write_backs.length > 0 && (
        <ul className="plain" data-testid="run-usage-write-backs">
          {run.memory_write_backs.flatMap((writeBack) =>
            writeBack.outcomes.map((outcome) => (
              <li
                key={`${writeBack.at}:${outcome.memory_store_id}:${outcome.path}`}
                data-testid="run-usage-write-back"
                data-outcome={outcome.outcome}
              >
                <OutcomeLine at={writeBack.at} outcome={outcome} />
              </li>
            )),
          )}
        </ul>
      )}
    </>
  );
}

/** A memory store has no resource id of its own; its store's id is unique in a run. */
function realizedKey(resource: RealizedResource): string {
  return resource.type === "memory_store" ? `memory_store:${resource.memory_store_id}` : resource.id;
}

function RealizedLine({ resource }: { resource: RealizedResource }) {
  switch (resource.type) {
    case "file":
      return (
        <>
          <span className="badge">file</span> <Link to="files">{resource.file_id}</Link> at{" "}
          <span className="mono">{resource.mount_path}</span>{" "}
          <span className="muted">
            ({formatBytes(resource.size_bytes)}, <span className="mono">{resource.digest}</span>)
          </span>
        </>
      );
    case "memory_store":
      return (
        <>
          <span className="badge">memory</span>{" "}
          <Link to={`memory-stores/${encodeURIComponent(resource.memory_store_id)}`}>
            {resource.memory_store_id}
          </Link>{" "}
          <span className="muted">({resource.access})</span> at{" "}
          <span className="mono">{resource.mount_path}</span>
        </>
      );
    case "github_repository":
      return (
        <>
          <span className="badge">repository</span> <span className="mono">{resource.id}</span> at{" "}
          <span className="mono">{resource.mount_path}</span>
          {resource.checkout && (
            <span className="muted">
              {" "}
              ({resource.checkout.name ?? resource.checkout.sha ?? resource.checkout.type})
            </span>
          )}
          <span className="muted">{resource.has_token ? ", with a token" : ", without a token"}</span>
        </>
      );
  }
}

function OutcomeLine({ at, outcome }: { at: string; outcome: MemoryWriteBackOutcome }) {
  return (
    <>
      <span className="badge">{outcome.outcome}</span> <span className="mono">{outcome.path}</span>{" "}
      <span className="muted">
        in {outcome.memory_store_id}, {formatTime(at)}
      </span>
      {outcome.reason && <div className="muted">{outcome.reason}</div>}
    </>
  );
}
