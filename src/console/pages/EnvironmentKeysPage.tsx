import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken, type EnvironmentKey } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import type { Environment } from "../api/wire.js";
import { formatTime } from "./formatTime.js";

/** Every self-hosted environment's keys: hint, name, when made and revoked; never the key itself. */
export function EnvironmentKeysPage() {
  const { client } = useApi();
  const keys = useQuery({
    queryKey: ["environment-keys"],
    queryFn: async ({ signal }) => {
      const environments = (await client.beta.environments.list({ limit: 100 }, { signal })).data;
      const selfHosted = environments.filter((e) => e.config.type === "self_hosted");
      return Promise.all(
        selfHosted.map(async (environment) => ({
          environment,
          keys: (await awaken.environmentKeys(client, environment.id, signal)).data,
        })),
      );
    },
  });
  return (
    <section aria-labelledby="environment-keys-title">
      <h1 id="environment-keys-title">Environment keys</h1>
      <p className="hint">
        The keys self-hosted environments' workers poll with. A key is shown once, when it is made (`awaken
        environment-keys create`); here only its hint.
      </p>
      {keys.isError && (
        <p role="alert" className="problem">
          {problemOf(keys.error)}
        </p>
      )}
      {keys.data?.length === 0 && <p>No self-hosted environments.</p>}
      {keys.data?.map(({ environment, keys }) => (
        <EnvironmentKeys key={environment.id} environment={environment} keys={keys} />
      ))}
    </section>
  );
}

function EnvironmentKeys({ environment, keys }: { environment: Environment; keys: EnvironmentKey[] }) {
  const titleId = `keys-${environment.id}`;
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId}>
        {environment.name} <span className="mono muted">{environment.id}</span>
      </h2>
      {keys.length === 0 ? (
        <p>No keys.</p>
      ) : (
        <div className="table-wrap">
          <table data-testid="environment-keys">
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Hint</th>
                <th scope="col">Created</th>
                <th scope="col">Revoked</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id}>
                  <td className="mono">{key.id}</td>
                  <td>{key.name ?? "—"}</td>
                  <td className="mono">{key.key_hint}</td>
                  <td>{formatTime(key.created_at)}</td>
                  <td>{key.revoked_at ? formatTime(key.revoked_at) : "live"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
