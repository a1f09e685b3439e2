/**
 * The snapshots a run sends must leave the official client (`HttpAgent`, which merges a
 * MESSAGES_SNAPSHOT into the messages it holds) with the thread's messages in order, however far
 * behind it was. The events are served over a tiny local SSE server so the real client reads them.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HttpAgent } from "@ag-ui/client";
import { type AGUIEvent, EventType, type Message } from "@ag-ui/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { snapshotEvents } from "../../src/edge/ag-ui/snapshotEvents.js";

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "1";

let served: AGUIEvent[] = [];
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const run = [
        { type: EventType.RUN_STARTED, threadId: "t", runId: "r" },
        ...served,
        { type: EventType.RUN_FINISHED, threadId: "t", runId: "r" },
      ];
      for (const event of run) res.write(`data: ${JSON.stringify(event)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const u = (id: string): Message => ({ id, role: "user", content: id });
const a = (id: string): Message => ({ id, role: "assistant", content: id });

/** The ids the official client holds after a run that sent `events`, starting from `held`. */
async function clientAfter(held: Message[], events: AGUIEvent[]): Promise<string[]> {
  served = events;
  const agent = new HttpAgent({ url, threadId: "t", initialMessages: held });
  await agent.runAgent();
  return agent.messages.map((m) => m.id);
}

describe("AG-UI snapshots keep the client's messages in thread order", () => {
  const history = [u("u1"), a("a1"), u("u2"), a("a2")];
  const all = [...history, u("new")];

  it("a client up to date gets one snapshot", async () => {
    const held = [u("u1"), a("a1"), u("u2"), a("a2"), u("new")];
    const events = snapshotEvents(
      held.map((m) => m.id),
      history,
      all,
    );
    expect(events).toHaveLength(1);
    expect(await clientAfter(held, events)).toEqual(all.map((m) => m.id));
  });

  it("a client behind the thread gets the history first, then the whole list", async () => {
    const held = [u("u1"), a("a1"), u("new")];
    // One snapshot alone would leave the missing turn after the new message.
    expect(await clientAfter(held, [{ type: EventType.MESSAGES_SNAPSHOT, messages: all }])).toEqual([
      "u1",
      "a1",
      "new",
      "u2",
      "a2",
    ]);
    const events = snapshotEvents(
      held.map((m) => m.id),
      history,
      all,
    );
    expect(events).toHaveLength(2);
    expect(await clientAfter(held, events)).toEqual(all.map((m) => m.id));
  });

  it("a client holding messages out of order is cleared first", async () => {
    const held = [a("a2"), u("u1"), u("new")];
    const events = snapshotEvents(
      held.map((m) => m.id),
      history,
      all,
    );
    expect(events[0]).toEqual({ type: EventType.MESSAGES_SNAPSHOT, messages: [] });
    expect(await clientAfter(held, events)).toEqual(all.map((m) => m.id));
  });
});
