import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import type { EnvironmentImage } from "../api/awaken.js";
import type { Environment } from "../api/wire.js";
import { Link } from "../router.js";
import { formatTime } from "./formatTime.js";
import { ImageStatus } from "./ImageStatus.js";
import { Problem } from "./Pager.js";
import { sandboxOf } from "./sandboxOf.js";

/**
 * One environment: its configuration summary and, when its current revision runs a derived container
 * image (`awaken_image`), that image's state and digest with a link to the build on the Builds page.
 */
export function EnvironmentPage({ environmentId }: { environmentId: string }) {
  const { client } = useApi();
  const environment = useQuery({
    queryKey: ["environment", environmentId],
    queryFn: async ({ signal }) =>
      (await client.beta.environments.retrieve(environmentId, {}, { signal })) as Environment & {
        awaken_image?: EnvironmentImage;
      },
    refetchInterval: (query) => {
      const status = query.state.data?.awaken_image?.status;
      return status === "pending" || status === "building" ? 3_000 : false;
    },
  });
  const env = environment.data;
  const image = env?.awaken_image;
  return (
    <section aria-labelledby="environment-title">
      <p>
        <Link to="environments">← Environments</Link>
      </p>
      <h1 id="environment-title">{env?.name ?? environmentId}</h1>
      <Problem error={environment.error} />
      {env && (
        <dl>
          <dt>Id</dt>
          <dd className="mono">{env.id}</dd>
          <dt>Type</dt>
          <dd>{env.config.type}</dd>
          <dt>Sandbox</dt>
          <dd>{sandboxOf(env).join(" · ")}</dd>
          <dt>Updated</dt>
          <dd>{formatTime(env.updated_at)}</dd>
          <dt>Container image</dt>
          <dd data-testid="environment-image">
            {image ? (
              <>
                <ImageStatus status={image.status} /> <span className="mono">{image.digest ?? ""}</span>
                {image.error && <div className="failure-line">{image.error}</div>}
                <div>
                  <Link to={`builds/${encodeURIComponent(image.id)}`}>Build {image.id}</Link>
                </div>
              </>
            ) : (
              <span className="muted">its image as named (no derived image)</span>
            )}
          </dd>
        </dl>
      )}
    </section>
  );
}
