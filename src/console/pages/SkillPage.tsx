import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { saveBytes } from "../api/saveDownload.js";
import { readSkillBundle } from "../api/skillBundle.js";
import type { SkillVersion } from "../api/wire.js";
import { Link } from "../router.js";
import { formatBytes } from "./formatBytes.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

const PAGE_SIZE = 50;

const skillPath = (skillId: string) => `skills/${encodeURIComponent(skillId)}`;

/**
 * One skill: its versions, and one version's files and SKILL.md (the latest unless the path names
 * another). The bundle is read from the version's zip; SKILL.md is shown as plain text, never as
 * markup: it is whatever the uploader wrote.
 */
export function SkillPage({ skillId, versionId }: { skillId: string; versionId?: string }) {
  const { client } = useApi();
  const pages = useCursorPages();
  const skill = useQuery({
    queryKey: ["skill", skillId],
    queryFn: ({ signal }) => client.beta.skills.retrieve(skillId, {}, { signal }),
  });
  const versions = useQuery({
    queryKey: ["skill-versions", skillId, pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.skills.versions.list(
        skillId,
        { limit: PAGE_SIZE, ...(pages.cursor ? { page: pages.cursor } : {}) },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  const shown = versionId ?? skill.data?.latest_version_id;
  return (
    <>
      <p>
        <Link to="skills">← Skills</Link>
      </p>
      <section aria-labelledby="skill-title">
        <h1 id="skill-title">
          {skill.data?.display_name ?? "Skill"} <span className="mono muted">{skillId}</span>
        </h1>
        <Problem error={skill.error} />
        {skill.data && (
          <dl>
            <dt>Source</dt>
            <dd>{skill.data.source.type}</dd>
            <dt>Latest version</dt>
            <dd className="mono">{skill.data.latest_version_id}</dd>
            <dt>Created</dt>
            <dd>{formatTime(skill.data.created_at)}</dd>
          </dl>
        )}
      </section>
      <section aria-labelledby="skill-versions-title">
        <h2 id="skill-versions-title">Versions</h2>
        <Problem error={versions.error} />
        {versions.data && (
          <div className="table-wrap">
            <table data-testid="skill-versions">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {versions.data.data.map((version) => (
                  <tr key={version.id} aria-current={version.id === shown ? "true" : undefined}>
                    <td className="mono">
                      <Link to={`${skillPath(skillId)}/versions/${encodeURIComponent(version.id)}`}>
                        {version.id}
                      </Link>
                      {version.id === skill.data?.latest_version_id && <span className="badge">latest</span>}
                    </td>
                    <td className="mono">{version.name}</td>
                    <td>{version.description}</td>
                    <td>{formatTime(version.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager pages={pages} nextPage={versions.data?.next} />
      </section>
      {shown && (
        <SkillVersionBundle
          key={shown}
          skillId={skillId}
          versionId={shown}
          version={versions.data?.data.find((version) => version.id === shown)}
        />
      )}
    </>
  );
}

function SkillVersionBundle({
  skillId,
  versionId,
  version,
}: {
  skillId: string;
  versionId: string;
  version: SkillVersion | undefined;
}) {
  const { client } = useApi();
  const zip = useQuery({
    queryKey: ["skill-version-zip", skillId, versionId],
    // A version never changes once made: its bundle need not be read again while the tab is open.
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: async ({ signal }) => {
      const response = await client.beta.skills.versions.download(
        versionId,
        { skill_id: skillId },
        { signal },
      );
      return response.arrayBuffer();
    },
  });
  const bundle = useQuery({
    queryKey: ["skill-version-bundle", skillId, versionId],
    enabled: zip.data !== undefined,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => readSkillBundle(new Uint8Array(zip.data!)),
  });
  return (
    <section aria-labelledby="skill-bundle-title" data-testid="skill-bundle">
      <h2 id="skill-bundle-title">
        Version <span className="mono">{versionId}</span>
      </h2>
      <Problem error={zip.error} prefix="Bundle: " />
      <Problem error={bundle.error} prefix="Bundle: " />
      {zip.data && (
        <button
          type="button"
          className="secondary"
          onClick={() => zip.data && saveBytes(zip.data, `${version?.name ?? versionId}.zip`)}
        >
          Download the bundle (zip)
        </button>
      )}
      {bundle.data && (
        <>
          <h3>Files</h3>
          <ul className="plain mono" data-testid="skill-files">
            {bundle.data.files.map((file) => (
              <li key={file.path}>
                {file.path} <span className="muted">({formatBytes(file.sizeBytes)})</span>
              </li>
            ))}
          </ul>
          <h3>SKILL.md</h3>
          {bundle.data.skillMd !== null ? (
            <pre className="skill-md" data-testid="skill-md">
              {bundle.data.skillMd}
            </pre>
          ) : (
            <p className="problem">{bundle.data.skillMdProblem}</p>
          )}
        </>
      )}
    </section>
  );
}
