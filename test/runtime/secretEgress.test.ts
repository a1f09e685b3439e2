import { describe, expect, it } from "vitest";
import { decodeCommitted, encodeFact } from "../../src/coordinator/factCodec.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import type { Activation, PinnedSecretVariable, SecretOpenRequest } from "../../src/coordinator/ports.js";
import type { RuntimePorts } from "../../src/runtime/ports.js";
import { CREDENTIAL_HOST_UNREACHABLE, SecretEgress } from "../../src/runtime/secretEgress.js";
import type { SandboxCredentials, SandboxSpec } from "../../src/sandbox/ports.js";

/**
 * The run's side of `environment_variable` credentials, against a fake custody port: a secret is
 * opened under the run's claim and never after it was lost, and what the sandbox reports becomes
 * `credential_host_unreachable_error` facts, once per session for unusable credentials.
 */

const VARIABLE: PinnedSecretVariable = {
  credentialId: "vcrd_1",
  vaultId: "vlt_1",
  revision: 3,
  secretName: "API_TOKEN",
  networking: { type: "limited", allowed_hosts: ["api.test"] },
  injection: { header: true, body: false },
};

const activation = {
  runId: "run_1",
  sessionId: "sesn_1",
  workspaceId: "wrkspc_1",
  owner: "worker-a",
  epoch: 7,
} as Activation;

const spec: SandboxSpec = { tier: "bwrap", sessionId: "sesn_1", networking: { type: "unrestricted" } };

function setup(options: { onOpen?: () => void } = {}) {
  const requests: SecretOpenRequest[] = [];
  const handed: Buffer[] = [];
  const ports = {
    log: { info: () => {}, warn: () => {} },
    credentials: {
      open: async () => ({ kind: "none" as const }),
      secretVariables: async () => [VARIABLE],
      openSecret: async (request: SecretOpenRequest) => {
        requests.push(request);
        options.onOpen?.();
        const value = Buffer.from("the-secret");
        handed.push(value);
        return { kind: "secret" as const, value, credentialId: VARIABLE.credentialId, revision: 3 };
      },
    },
  } as unknown as RuntimePorts;
  const controller = new AbortController();
  const egress = new SecretEgress(ports, activation, controller.signal);
  return { egress, controller, requests, handed };
}

async function credentialsOf(egress: SecretEgress): Promise<SandboxCredentials> {
  const withCredentials = await egress.withCredentials(spec);
  if (!withCredentials.credentials) throw new Error("no credentials");
  return withCredentials.credentials;
}

describe("opening for the egress proxy", () => {
  it("asks custody with the run's claim and the egress holder, by variable name", async () => {
    const { egress, requests } = setup();
    const credentials = await credentialsOf(egress);
    expect(credentials.variables).toEqual([
      { secretName: "API_TOKEN", networking: VARIABLE.networking, injection: VARIABLE.injection },
    ]);
    const value = await credentials.open("API_TOKEN");
    expect(value?.toString()).toBe("the-secret");
    expect(requests).toEqual([
      {
        workspaceId: "wrkspc_1",
        sessionId: "sesn_1",
        runId: "run_1",
        owner: "worker-a",
        epoch: 7,
        holder: "egress_proxy",
        secretName: "API_TOKEN",
      },
    ]);
  });

  it("after a lost claim nothing is asked; a claim lost while custody answered gets the Buffer zeroed", async () => {
    const lostBefore = setup();
    const credentials = await credentialsOf(lostBefore.egress);
    lostBefore.controller.abort();
    expect(await credentials.open("API_TOKEN")).toBeNull();
    expect(lostBefore.requests).toEqual([]);

    let controller: AbortController | null = null;
    const lostDuring = setup({ onOpen: () => controller?.abort() });
    controller = lostDuring.controller;
    const during = await credentialsOf(lostDuring.egress);
    expect(await during.open("API_TOKEN")).toBeNull();
    expect(lostDuring.handed).toHaveLength(1);
    expect(lostDuring.handed[0]?.every((byte) => byte === 0)).toBe(true);
  });

  it("the variables are asked for under the run's claim (a remote worker's coordinator checks it)", async () => {
    const asked: unknown[] = [];
    const ports = {
      log: { info: () => {}, warn: () => {} },
      credentials: {
        open: async () => ({ kind: "none" as const }),
        secretVariables: async (request: unknown) => {
          asked.push(request);
          return [VARIABLE];
        },
        openSecret: async () => ({ kind: "none" as const }),
      },
    } as unknown as RuntimePorts;
    await credentialsOf(new SecretEgress(ports, activation, new AbortController().signal));
    expect(asked).toEqual([
      { workspaceId: "wrkspc_1", sessionId: "sesn_1", runId: "run_1", owner: "worker-a", epoch: 7 },
    ]);
  });

  it("an open that throws (custody unreachable, or a remote claim found lost) is a refusal, logged", async () => {
    const warned: { fields: Record<string, unknown>; message: string }[] = [];
    const ports = {
      log: {
        info: () => {},
        warn: (fields: Record<string, unknown>, message: string) => warned.push({ fields, message }),
      },
      credentials: {
        open: async () => ({ kind: "none" as const }),
        secretVariables: async () => [VARIABLE],
        openSecret: async () => {
          throw new Error("credential not opened for run run_1: the claim is lost (stale)");
        },
      },
    } as unknown as RuntimePorts;
    const credentials = await credentialsOf(
      new SecretEgress(ports, activation, new AbortController().signal),
    );
    expect(await credentials.open("API_TOKEN")).toBeNull();
    expect(warned).toEqual([
      {
        fields: expect.objectContaining({
          runId: "run_1",
          secretName: "API_TOKEN",
          error: expect.stringContaining("claim is lost"),
        }),
        message: "credential could not be opened for the egress proxy",
      },
    ]);
  });

  it("once the run slice ended (close), the proxy's binding opens nothing", async () => {
    const { egress, requests } = setup();
    const credentials = await credentialsOf(egress);
    egress.close();
    expect(await credentials.open("API_TOKEN")).toBeNull();
    expect(requests).toEqual([]);
  });
});

describe("credential_host_unreachable_error", () => {
  const committed = (type: string, credentialId: string) =>
    decodeCommitted({
      id: "sevt_x",
      type: "session.error",
      body: { error: { type, credential_id: credentialId } },
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq: 1,
      createdAt: 0,
    } as CommittedFact);

  it("an unusable credential is reported once per session; refused hosts once per call and host", async () => {
    const { egress } = setup();
    const credentials = await credentialsOf(egress);
    credentials.onUnusable("API_TOKEN", "the environment forbids api.test");
    credentials.onUnusable("API_TOKEN", "the environment forbids api.test");
    credentials.onHostRefused("API_TOKEN", "api.test", "not allowed");
    credentials.onHostRefused("API_TOKEN", "api.test", "not allowed");
    credentials.onHostRefused("UNKNOWN", "api.test", "not allowed");
    const facts = egress.takeErrors(1000, []);
    expect(facts.map((f) => encodeFact(f).body.error)).toEqual([
      {
        type: CREDENTIAL_HOST_UNREACHABLE,
        message: "credential vcrd_1: the environment forbids api.test",
        retry_status: { type: "retrying" },
        credential_id: "vcrd_1",
        vault_id: "vlt_1",
      },
      expect.objectContaining({
        type: CREDENTIAL_HOST_UNREACHABLE,
        message: expect.stringContaining("a request to api.test"),
        credential_id: "vcrd_1",
        vault_id: "vlt_1",
      }),
    ]);
    // Drained; and an unusable credential already in the history is not said again.
    expect(egress.takeErrors(1001, [])).toEqual([]);
    credentials.onUnusable("API_TOKEN", "again");
    expect(egress.takeErrors(1002, [committed(CREDENTIAL_HOST_UNREACHABLE, "vcrd_1")])).toEqual([]);
  });
});
