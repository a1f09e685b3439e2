/**
 * Helpers for the self-hosted work queue tests: a self_hosted environment with an environment key
 * (minted through the Awaken extension route), and SDK clients authenticated as the worker.
 */
import Anthropic from "@anthropic-ai/sdk";
import { sessionsTokenFromSecret } from "@anthropic-ai/sdk/lib/environments/worker";
import { expect } from "vitest";
import { MODEL, WEATHER_TOOL } from "./sdkHelpers.js";
import type { TestServer } from "./testServer.js";

export interface EnvironmentKey {
  type: "environment_key";
  id: string;
  environment_id: string;
  name: string | null;
  key?: string;
  key_hint: string;
  created_at: string;
  revoked_at: string | null;
}

/** `POST /v1/awaken/environments/{id}/keys` through the SDK's generic request method (API key). */
export function createEnvironmentKey(client: Anthropic, environmentId: string, name?: string) {
  return client.post<EnvironmentKey>(`/v1/awaken/environments/${environmentId}/keys`, {
    body: name === undefined ? {} : { name },
  });
}

/** An SDK client that sends `credential` as its Bearer token, as the SDK's worker helpers do. */
export function clientAs(t: TestServer, credential: string): Anthropic {
  return new Anthropic({ baseURL: t.server.url, apiKey: credential, maxRetries: 0 });
}

/** The sessions token inside a polled item's `secret`, decoded by the SDK's own helper. */
export function sessionsToken(secret: string | null | undefined): string {
  const token = sessionsTokenFromSecret(secret);
  expect(token, "the poll's secret carries a sessions token").toMatch(/^sk-awaken-sess-/);
  return token as string;
}

/** A self_hosted environment, its key, a worker client on that key, and an agent with a custom tool. */
export async function selfHostedEnvironment(t: TestServer) {
  const environment = await t.client.beta.environments.create({
    name: "self-hosted",
    config: { type: "self_hosted" },
  });
  const key = await createEnvironmentKey(t.client, environment.id, "test worker");
  const agent = await t.client.beta.agents.create({
    name: "Self-hosted",
    model: MODEL,
    tools: [WEATHER_TOOL],
  });
  return { environment, key: key.key as string, worker: clientAs(t, key.key as string), agent };
}
