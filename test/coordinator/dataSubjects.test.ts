import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  dataSubjectOf,
  ERASED_TEXT,
  type SubjectErasureStore,
  tombstoneStored,
} from "../../src/coordinator/dataSubjects.js";
import { decodeFact, encodeFact } from "../../src/coordinator/factCodec.js";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import { localWorkerGateway } from "../../src/coordinator/localWorkerGateway.js";
import type { CoordinatorPorts, SessionRecord } from "../../src/coordinator/ports.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { storedFact } from "../support/storedFacts.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  type StoreFixture,
  sessionWithQueuedRun,
} from "../support/storeFixtures.js";

describe("tombstones through the fact codec", () => {
  it("a tombstoned fact keeps its id and kind, still decodes, and a second erasure changes nothing", () => {
    fc.assert(
      fc.property(storedFact, (fact) => {
        const erased = tombstoneStored(fact) ?? fact;
        const decoded = decodeFact(erased);
        expect(erased.id).toBe(fact.id);
        expect(decoded.kind).toBe(decodeFact(fact).kind);
        expect(encodeFact(decoded)).toEqual(erased);
        expect(tombstoneStored(erased)).toBeNull();
      }),
    );
  });

  it("message text and tool input are replaced, the call's skeleton is kept", () => {
    const message = tombstoneStored({
      id: "sevt_1",
      type: "user.message",
      body: { content: [{ type: "text", text: "my address is 1 Main St" }] },
    });
    expect(message?.body).toEqual({ content: [{ type: "text", text: ERASED_TEXT }] });
  });

  it("a workflow run's names and descriptions are erased; its ids and phases' ids stay", () => {
    const created = tombstoneStored({
      id: "sevt_5",
      type: "workflow_run.created",
      body: {
        workflow_run_id: "wfr_c",
        name: "Jane's taxes",
        description: null,
        phases: [{ id: "wfph_c.0", name: "read her 1040", description: "all pages" }],
      },
    });
    expect(created?.body).toEqual({
      workflow_run_id: "wfr_c",
      name: ERASED_TEXT,
      description: null,
      phases: [{ id: "wfph_c.0", name: ERASED_TEXT, description: ERASED_TEXT }],
    });
    expect(
      tombstoneStored({
        id: "sevt_6",
        type: "workflow_run.status_running",
        body: { workflow_run_id: "wfr_c" },
      }),
    ).toBeNull();
  });

  it("a UI client's message metadata is erased with the text; its message id stays", () => {
    const message = tombstoneStored({
      id: "sevt_4",
      type: "user.message",
      body: {
        content: [{ type: "text", text: "hi" }],
        awaken_client_message_id: "m1",
        awaken_client_metadata: { email: "someone@example.com" },
      },
    });
    expect(message?.body).toEqual({
      content: [{ type: "text", text: ERASED_TEXT }],
      awaken_client_message_id: "m1",
    });
    // Already erased text with metadata left: the metadata still goes.
    const leftover = tombstoneStored({
      id: "sevt_5",
      type: "user.message",
      body: { content: [{ type: "text", text: ERASED_TEXT }], awaken_client_metadata: { n: 1 } },
    });
    expect(leftover?.body).toEqual({ content: [{ type: "text", text: ERASED_TEXT }] });
  });

  it("what one agent told another is erased too; the threads and agent names stay", () => {
    const said = [{ type: "text", text: "the user lives at 1 Main St" }];
    const sent = tombstoneStored({
      id: "sevt_2",
      type: "agent.thread_message_sent",
      body: { content: said, to_session_thread_id: "sthr_child", to_agent_name: "researcher" },
    });
    expect(sent?.body).toEqual({
      content: [{ type: "text", text: ERASED_TEXT }],
      to_session_thread_id: "sthr_child",
      to_agent_name: "researcher",
    });
    const received = tombstoneStored({
      id: "sevt_3",
      type: "agent.thread_message_received",
      body: { content: said, from_session_thread_id: "sthr_primary" },
    });
    expect(received?.body).toEqual({
      content: [{ type: "text", text: ERASED_TEXT }],
      from_session_thread_id: "sthr_primary",
    });
  });
});

describe("a session's data subject", () => {
  it("is an opaque id, never a path or a query fragment", () => {
    expect(dataSubjectOf({})).toBeNull();
    expect(dataSubjectOf({ awaken_data_subject: "user-1@tenant:eu" })).toBe("user-1@tenant:eu");
    for (const bad of ["", "..", "../x", "a/b", "a?b", "a#b", "a%2F", " x", "x".repeat(129)])
      expect(() => dataSubjectOf({ awaken_data_subject: bad })).toThrow(/data subject id/);
  });
});

describe.each(BACKEND_NAMES)(
  "a claim tells the worker when the session's subject was last erased: %s",
  (backend) => {
    let fx: (StoreFixture & { runId: string }) | null = null;
    beforeEach((ctx) => {
      const reason = backendUnavailable(backend);
      if (reason) ctx.skip(reason);
    });
    afterEach(async () => {
      await fx?.handle.close();
      fx = null;
    });

    async function claimWith(session: Partial<SessionRecord>, erasedAt: number | null) {
      fx = await sessionWithQueuedRun(backend, session);
      const lookups: string[][] = [];
      const erasure: SubjectErasureStore = {
        ...fx.stores.erasure,
        lastErasedAt: async (workspaceId, subjectId) => {
          lookups.push([workspaceId, subjectId]);
          return erasedAt;
        },
      };
      const ports: CoordinatorPorts = {
        ...fx.stores,
        erasure,
        signals: new InProcessWakeSignals(),
        evidence: new InProcessLiveEvidenceBus(),
      };
      return { activation: await localWorkerGateway(ports).claim("w/0", 10_000), lookups };
    }

    it("a session of an erased subject: the erasure's time, and never the subject itself", async () => {
      const { activation, lookups } = await claimWith(
        { metadata: { awaken_data_subject: "user-1" }, dataSubject: "user-1" },
        1_234,
      );
      expect(activation?.workspaceErasedAt).toBe(1_234);
      expect(activation && "dataSubject" in activation).toBe(false);
      expect(lookups).toEqual([[activation?.workspaceId, "user-1"]]);
      // The store's own answer for a subject never erased.
      expect(await fx?.stores.erasure.lastErasedAt(activation?.workspaceId ?? "", "user-1")).toBeNull();
    });

    it("a subject never erased, or a session without one: nothing, and no lookup for the latter", async () => {
      expect(
        (await claimWith({ metadata: { awaken_data_subject: "user-2" }, dataSubject: "user-2" }, null))
          .activation,
      ).not.toHaveProperty("workspaceErasedAt");
      await fx?.handle.close();
      const plain = await claimWith({}, 99);
      expect(plain.activation).not.toHaveProperty("workspaceErasedAt");
      expect(plain.lookups).toEqual([]);
    });
  },
);
