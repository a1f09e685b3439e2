import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { Pager, Problem, useCursorPages } from "./Pager.js";

const PAGE_SIZE = 50;

/** The workspace's skills: a display name (the uploader's words, shown as text) and the latest version. */
export function SkillsPage() {
  const { client } = useApi();
  const pages = useCursorPages();
  const skills = useQuery({
    queryKey: ["skills", pages.cursor],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.beta.skills.list(
        { limit: PAGE_SIZE, ...(pages.cursor ? { page: pages.cursor } : {}) },
        { signal },
      );
      return { data: page.data, next: page.next_page ?? null };
    },
  });
  return (
    <section aria-labelledby="skills-title">
      <h1 id="skills-title">Skills</h1>
      <p className="hint">An agent pins a skill's version; a run mounts exactly that version.</p>
      <Problem error={skills.error} />
      {skills.data?.data.length === 0 && <p>None yet.</p>}
      {skills.data && skills.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="skills">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Source</th>
                <th scope="col">Latest version</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {skills.data.data.map((skill) => (
                <tr key={skill.id} data-testid="skill-row" data-skill-id={skill.id}>
                  <td>
                    <Link to={`skills/${encodeURIComponent(skill.id)}`}>
                      {skill.display_name || skill.id}
                    </Link>
                    <div className="muted mono">{skill.id}</div>
                  </td>
                  <td>{skill.source.type}</td>
                  <td className="mono">{skill.latest_version_id}</td>
                  <td>
                    <time dateTime={skill.updated_at}>{formatTime(skill.updated_at)}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} nextPage={skills.data?.next} />
    </section>
  );
}
