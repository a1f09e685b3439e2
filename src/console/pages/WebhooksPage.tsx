import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useApi } from "../api/apiContext.js";
import { awaken, type WebhookDelivery, type WebhookEndpoint } from "../api/awaken.js";
import { problemOf } from "../api/client.js";
import { formatTime } from "./formatTime.js";

/**
 * The workspace's webhook endpoints and, per endpoint, its dead-lettered deliveries (every attempt
 * failed) with a button to deliver one again under the same `webhook-id`. Endpoints are made with
 * the API (`client.beta.organization.webhooks.create`): their signing secret is shown then, never here.
 */
export function WebhooksPage() {
  const { client } = useApi();
  const endpoints = useQuery({
    queryKey: ["webhooks"],
    queryFn: ({ signal }) => awaken.webhooks(client, signal),
  });
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <p className="hint">
        Endpoints are created with the API; their signing secret is shown once, then. Deliveries that failed
        every attempt wait here until redelivered.
      </p>
      {endpoints.isError && (
        <p role="alert" className="problem">
          {problemOf(endpoints.error)}
        </p>
      )}
      {endpoints.data?.data.length === 0 && <p>No webhook endpoints.</p>}
      {endpoints.data?.data.map((endpoint) => (
        <Endpoint key={endpoint.id} endpoint={endpoint} />
      ))}
    </section>
  );
}

function Endpoint({ endpoint }: { endpoint: WebhookEndpoint }) {
  const { client } = useApi();
  const titleId = `webhook-${endpoint.id}`;
  const failed = useQuery({
    queryKey: ["webhook-deliveries", endpoint.id],
    queryFn: ({ signal }) => awaken.webhookDeliveries(client, endpoint.id, "abandoned", signal),
  });
  return (
    <section aria-labelledby={titleId} data-testid="webhook-endpoint">
      <h2 id={titleId}>
        {endpoint.name || endpoint.url} <span className="mono muted">{endpoint.id}</span>
      </h2>
      <p>
        <span className="mono">{endpoint.url}</span> · {endpoint.state} · {endpoint.enabled_events.join(", ")}
      </p>
      {failed.isError && (
        <p role="alert" className="problem">
          {problemOf(failed.error)}
        </p>
      )}
      {failed.data?.data.length === 0 && <p className="muted">No failed deliveries.</p>}
      {failed.data && failed.data.data.length > 0 && (
        <div className="table-wrap">
          <table data-testid="webhook-failed-deliveries">
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Event</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last error</th>
                <th scope="col">Given up</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {failed.data.data.map((delivery) => (
                <FailedDelivery key={delivery.id} endpointId={endpoint.id} delivery={delivery} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function FailedDelivery({ endpointId, delivery }: { endpointId: string; delivery: WebhookDelivery }) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const redeliver = useMutation({
    mutationFn: () => awaken.redeliverWebhook(client, endpointId, delivery.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["webhook-deliveries", endpointId] }),
  });
  return (
    <tr data-testid="webhook-delivery" data-delivery-id={delivery.id}>
      <td className="mono">{delivery.id}</td>
      <td data-label="Event">{delivery.event_type}</td>
      <td data-label="Attempts">{delivery.attempts}</td>
      <td data-label="Last error">{delivery.last_error ?? "—"}</td>
      <td data-label="Given up">{delivery.settled_at ? formatTime(delivery.settled_at) : "—"}</td>
      <td>
        <button type="button" onClick={() => redeliver.mutate()} disabled={redeliver.isPending}>
          Redeliver
        </button>
        {redeliver.isError && (
          <p role="alert" className="problem">
            {problemOf(redeliver.error)}
          </p>
        )}
      </td>
    </tr>
  );
}
