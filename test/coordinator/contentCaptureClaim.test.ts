import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import { localWorkerGateway } from "../../src/coordinator/localWorkerGateway.js";
import type { CoordinatorPorts, SessionRecord } from "../../src/coordinator/ports.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import type { CaptureConsents } from "../../src/kernel/contentCapture.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  type StoreBackend,
  type StoreFixture,
  sessionWithQueuedRun,
} from "../support/storeFixtures.js";

let fx: (StoreFixture & { runId: string }) | null = null;

afterEach(async () => {
  await fx?.handle.close();
  fx = null;
});

/** Consent held per subject, as Control would answer it; every lookup counted. */
function consentTable() {
  const granted = new Map<string, boolean>();
  const lookups: string[] = [];
  const port: CaptureConsents = {
    consented: async (_workspaceId, subjectId) => {
      lookups.push(subjectId);
      return granted.get(subjectId) === true;
    },
  };
  return { granted, lookups, port };
}

describe.each(BACKEND_NAMES)("the claim decides content capture: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
  });

  async function gatewayFor(b: StoreBackend, session: Partial<SessionRecord>, consents: CaptureConsents) {
    fx = await sessionWithQueuedRun(b, session);
    const ports: CoordinatorPorts = {
      ...fx.stores,
      signals: new InProcessWakeSignals(),
      evidence: new InProcessLiveEvidenceBus(),
    };
    return localWorkerGateway(ports, consents);
  }

  it("a session that asked, whose subject consented: captured; withdrawn: not, from the next claim", async () => {
    const consents = consentTable();
    consents.granted.set("user-1", true);
    const gateway = await gatewayFor(
      backend,
      {
        metadata: { awaken_data_subject: "user-1", awaken_capture_content: "telemetry" },
        dataSubject: "user-1",
      },
      consents.port,
    );
    const first = await gateway.claim("w/0", 10_000);
    expect(first?.captureContent).toBe(true);
    // The request and the subject stay with the coordinator: workers get the decision only.
    expect(first && "captureRequest" in first).toBe(false);
    expect(consents.lookups).toEqual(["user-1"]);

    await gateway.release(first?.runId ?? "", first?.owner ?? "", first?.epoch ?? 0);
    consents.granted.set("user-1", false);
    const second = await gateway.claim("w/1", 10_000);
    expect(second?.runId).toBe(first?.runId);
    expect(second?.captureContent).toBe(false);
    expect(consents.lookups).toEqual(["user-1", "user-1"]);
  });

  it("a session that did not ask: not captured, and no consent is looked up", async () => {
    const consents = consentTable();
    consents.granted.set("user-2", true);
    const gateway = await gatewayFor(
      backend,
      { metadata: { awaken_data_subject: "user-2", ticket: "T-1" }, dataSubject: "user-2" },
      consents.port,
    );
    const claimed = await gateway.claim("w/0", 10_000);
    expect(claimed?.captureContent).toBe(false);
    expect(consents.lookups).toEqual([]);
  });

  it("a session that asked and names no subject: captured without a lookup", async () => {
    const consents = consentTable();
    const gateway = await gatewayFor(
      backend,
      { metadata: { awaken_capture_content: "telemetry" } },
      consents.port,
    );
    const claimed = await gateway.claim("w/0", 10_000);
    expect(claimed?.captureContent).toBe(true);
    expect(consents.lookups).toEqual([]);
  });
});
