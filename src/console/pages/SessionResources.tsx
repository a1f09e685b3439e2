import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import type { Session, SessionResource } from "../api/wire.js";
import { Link } from "../router.js";
import { Problem } from "./Pager.js";
import { SessionRunUsage } from "./SessionRunUsage.js";

/** The wire caps a page of session resources well above what a session attaches; one page is all. */
const RESOURCES_LIMIT = 100;

type PinnedSkill = Session["agent"]["skills"][number];

/**
 * What the session's runs see: the files, memory stores (with their access) and repositories the
 * session resources list answers, and the skill versions its agent pinned at publication (a run
 * mounts exactly those, never a newer one). A repository's token is never on the wire, so never here.
 * Below them, what each run actually used, from its own record (`SessionRunUsage`).
 */
export function SessionResources({
  sessionId,
  skills,
}: {
  sessionId: string;
  skills: readonly PinnedSkill[];
}) {
  const { client } = useApi();
  const resources = useQuery({
    queryKey: ["session-resources", sessionId],
    queryFn: async ({ signal }) =>
      (await client.beta.sessions.resources.list(sessionId, { limit: RESOURCES_LIMIT }, { signal })).data,
  });
  return (
    <div className="card" data-testid="session-resources">
      <h2>Resources</h2>
      <Problem error={resources.error} />
      {resources.data?.length === 0 && skills.length === 0 && (
        <p className="muted">No file, memory store, repository or skill.</p>
      )}
      {resources.data && resources.data.length > 0 && (
        <ul className="plain">
          {resources.data.map((resource) => (
            <li key={keyOf(resource)} data-testid="session-resource" data-type={resource.type}>
              <ResourceLine resource={resource} />
            </li>
          ))}
        </ul>
      )}
      {skills.length > 0 && (
        <ul className="plain">
          {skills.map((skill) => (
            <li key={`${skill.skill_id}@${skill.version}`} data-testid="session-skill">
              <span className="badge">skill</span>{" "}
              {skill.type === "custom" ? (
                <Link
                  to={`skills/${encodeURIComponent(skill.skill_id)}/versions/${encodeURIComponent(skill.version)}`}
                >
                  {skill.skill_id}
                </Link>
              ) : (
                <span className="mono">{skill.skill_id}</span>
              )}{" "}
              <span className="muted">version {skill.version}</span>
            </li>
          ))}
        </ul>
      )}
      <SessionRunUsage sessionId={sessionId} />
    </div>
  );
}

/** A memory store resource has no id of its own on the wire; its store's id is unique in a session. */
function keyOf(resource: SessionResource): string {
  return resource.type === "memory_store" ? `memory_store:${resource.memory_store_id}` : resource.id;
}

function ResourceLine({ resource }: { resource: SessionResource }) {
  switch (resource.type) {
    case "file":
      return (
        <>
          <span className="badge">file</span> <Link to="files">{resource.file_id}</Link> at{" "}
          <span className="mono">{resource.mount_path}</span>
        </>
      );
    case "memory_store":
      return (
        <>
          <span className="badge">memory</span>{" "}
          <Link to={`memory-stores/${encodeURIComponent(resource.memory_store_id)}`}>
            {resource.name ?? resource.memory_store_id}
          </Link>{" "}
          <span className="muted">({resource.access ?? "read_write"})</span>
          {resource.mount_path && (
            <>
              {" "}
              at <span className="mono">{resource.mount_path}</span>
            </>
          )}
        </>
      );
    case "github_repository":
      return (
        <>
          <span className="badge">repository</span> <span className="mono">{resource.url}</span>
          {resource.checkout && (
            <span className="muted">
              {" "}
              ({resource.checkout.type === "branch" ? resource.checkout.name : resource.checkout.sha})
            </span>
          )}{" "}
          at <span className="mono">{resource.mount_path}</span>
        </>
      );
  }
}
