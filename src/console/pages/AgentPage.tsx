import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/apiContext.js";
import { problemOf } from "../api/client.js";
import type { Agent } from "../api/wire.js";
import { prettyJson } from "../projection/contentText.js";
import { lineDiff } from "../projection/lineDiff.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";

/** The configuration a version publishes: everything but the bookkeeping every version differs in. */
function published(agent: Agent): string {
  const { created_at: _c, updated_at: _u, archived_at: _a, version: _v, ...config } = agent;
  return prettyJson(config);
}

/** One agent's versions (every publication stays addressable) and the diff between two of them. */
export function AgentPage({ agentId }: { agentId: string }) {
  const { client } = useApi();
  const versions = useQuery({
    queryKey: ["agent", agentId, "versions"],
    queryFn: async ({ signal }) => {
      const all: Agent[] = [];
      for await (const version of client.beta.agents.versions.list(agentId, { limit: 100 }, { signal })) {
        all.push(version as Agent);
      }
      return all.sort((x, y) => x.version - y.version);
    },
  });
  const list = versions.data ?? [];
  const latest = list.at(-1)?.version ?? 1;
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const fromVersion = list.find((v) => v.version === (from ?? Math.max(1, latest - 1)));
  const toVersion = list.find((v) => v.version === (to ?? latest));
  const diff = fromVersion && toVersion ? lineDiff(published(fromVersion), published(toVersion)) : null;
  return (
    <section aria-labelledby="agent-title">
      <p>
        <Link to="agents">← Agents</Link>
      </p>
      <h1 id="agent-title">{toVersion?.name ?? agentId}</h1>
      {versions.isError && (
        <p role="alert" className="problem">
          {problemOf(versions.error)}
        </p>
      )}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Model</th>
              <th scope="col">Published</th>
            </tr>
          </thead>
          <tbody>
            {list.map((version) => (
              <tr key={version.version} data-testid="agent-version">
                <td>{version.version}</td>
                <td className="mono">{version.model.id}</td>
                <td>{formatTime(version.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.length > 1 && (
        <div className="card">
          <h2>Diff between versions</h2>
          <div className="toolbar">
            <label>
              From
              <select value={fromVersion?.version} onChange={(event) => setFrom(Number(event.target.value))}>
                {list.map((v) => (
                  <option key={v.version} value={v.version}>
                    {v.version}
                  </option>
                ))}
              </select>
            </label>
            <label>
              To
              <select value={toVersion?.version} onChange={(event) => setTo(Number(event.target.value))}>
                {list.map((v) => (
                  <option key={v.version} value={v.version}>
                    {v.version}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {diff === null ? (
            <p>Too long to diff here.</p>
          ) : (
            <pre className="diff" data-testid="agent-diff">
              {diff.map((line, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a diff's lines are positional and never reorder
                <span key={index} className={`diff-${line.op}`}>
                  {line.op === "added" ? "+ " : line.op === "removed" ? "- " : "  "}
                  {line.text}
                  {"\n"}
                </span>
              ))}
            </pre>
          )}
        </div>
      )}
    </section>
  );
}
