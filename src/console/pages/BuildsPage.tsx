import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken, type ImageBuild } from "../api/awaken.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { ImageStatus } from "./ImageStatus.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

/**
 * The container images built for the workspace's environments (a base image plus a frozen package
 * resolution): their state, digest, the environments that run them and the tail of each build log.
 * A failed build is retried only by its Rebuild button (the rebuild route of an environment whose
 * current revision runs it). `buildId` opens that build's log.
 */
export function BuildsPage({ buildId }: { buildId: string | null }) {
  const { client } = useApi();
  const pages = useCursorPages();
  const builds = useQuery({
    queryKey: ["image-builds", pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: ({ signal }) => awaken.imageBuilds(client, pages.cursor, signal),
    // A build in progress settles on its own: look again while any is pending or building.
    refetchInterval: (query) =>
      query.state.data?.data.some((b) => b.status === "pending" || b.status === "building") ? 3_000 : false,
  });
  return (
    <section aria-labelledby="builds-title">
      <h1 id="builds-title">Builds</h1>
      <p className="hint">
        Container-tier environments that list npm or pip packages run an image built from their base and their
        frozen packages. Identical inputs share one build; a failed build waits for Rebuild.
      </p>
      <Problem error={builds.error} />
      {builds.data?.data.length === 0 && <p>No image builds.</p>}
      {builds.data && builds.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="image-builds">
            <thead>
              <tr>
                <th scope="col">Build</th>
                <th scope="col">Status</th>
                <th scope="col">Digest</th>
                <th scope="col">Environments</th>
                <th scope="col">Updated</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {builds.data.data.map((build) => (
                <BuildRow key={build.id} build={build} open={build.id === buildId} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} nextPage={builds.data?.next_page} />
    </section>
  );
}

function BuildRow({ build, open }: { build: ImageBuild; open: boolean }) {
  return (
    <tr
      data-testid="image-build"
      data-build-id={build.id}
      aria-current={open ? "true" : undefined}
      id={`build-${build.id}`}
    >
      <td>
        <span className="mono">{build.id}</span>
        <div className="muted mono">{build.base_image}</div>
        {build.log_tail !== null && (
          <details open={open}>
            <summary>Build log (last lines)</summary>
            <pre data-testid="image-build-log">{build.log_tail}</pre>
          </details>
        )}
      </td>
      <td data-label="Status">
        <ImageStatus status={build.status} />
        <div className="muted">
          {build.attempts} attempt{build.attempts === 1 ? "" : "s"}
        </div>
        {build.error && <div className="failure-line">{build.error}</div>}
      </td>
      <td data-label="Digest" className="mono">
        {build.digest ?? "—"}
      </td>
      <td data-label="Environments">
        {build.environments.map((environment) => (
          <div key={environment.id}>
            <Link to={`environments/${encodeURIComponent(environment.id)}`}>{environment.name}</Link>{" "}
            <span className="muted">
              revision {environment.revisions.join(", ")}
              {environment.current ? "" : " (not its current one)"}
            </span>
          </div>
        ))}
      </td>
      <td data-label="Updated">{formatTime(build.updated_at)}</td>
      <td>{build.status === "failed" && <RebuildButton build={build} />}</td>
    </tr>
  );
}

/** The rebuild route works on an environment's current revision: one that runs this build now. */
function RebuildButton({ build }: { build: ImageBuild }) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const runner = build.environments.find((environment) => environment.current);
  const rebuild = useMutation({
    mutationFn: () => awaken.rebuildImage(client, runner?.id ?? ""),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: ["image-builds"] }),
        queryClient.invalidateQueries({ queryKey: ["environment"] }),
      ]),
  });
  if (!runner) return <span className="muted">No environment runs it now</span>;
  return (
    <>
      <button type="button" onClick={() => rebuild.mutate()} disabled={rebuild.isPending}>
        Rebuild
      </button>
      <Problem error={rebuild.error} />
    </>
  );
}
