/**
 * The scenario through the Managed Agents wire and its official client, `@anthropic-ai/sdk`: a
 * stream held open, events sent, `user.interrupt` to stop, and a dropped stream made whole again
 * by reopening it and reading the events list.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { history, StreamReader, userMessage, type WireEvent } from "../support/sdkHelpers.js";
import { managedTurns, managedView } from "./managedHistory.js";
import type { HistoryTurn, ProtocolDriver, TurnView } from "./protocolDriver.js";

type SendEvent = Parameters<Anthropic["beta"]["sessions"]["events"]["send"]>[1]["events"][number];

export class ManagedDriver implements ProtocolDriver {
  readonly name = "Managed Agents";
  readonly disconnectInterrupts = false;
  /** What this client knows of the session, in order, without deltas: streamed or listed. */
  private known: WireEvent[] = [];
  private reader: StreamReader | null = null;

  private constructor(
    private readonly client: Anthropic,
    readonly sessionId: string,
  ) {}

  static async open(client: Anthropic, sessionId: string): Promise<ManagedDriver> {
    const driver = new ManagedDriver(client, sessionId);
    driver.known = await history(client, sessionId);
    await driver.openStream();
    return driver;
  }

  say(text: string): Promise<TurnView> {
    return this.respond(userMessage(text));
  }

  answerClientTool(callId: string, output: string): Promise<TurnView> {
    return this.respond({
      type: "user.custom_tool_result",
      custom_tool_use_id: callId,
      content: [{ type: "text", text: output }],
    });
  }

  decide(callId: string, allowed: boolean, reason?: string): Promise<TurnView> {
    return this.respond({
      type: "user.tool_confirmation",
      tool_use_id: callId,
      result: allowed ? "allow" : "deny",
      ...(reason !== undefined ? { deny_message: reason } : {}),
    });
  }

  async interruptDuringTurn(text: string): Promise<TurnView> {
    const reader = this.stream();
    const from = await this.sendAndAwaitDelta(text);
    await this.client.beta.sessions.events.send(this.sessionId, { events: [{ type: "user.interrupt" }] });
    await reader.until((e) => e.type === "session.status_idle", { from });
    return this.view();
  }

  async disconnectMidTurn(text: string): Promise<void> {
    await this.sendAndAwaitDelta(text);
    this.absorb();
    await this.stream().close();
    this.reader = null;
  }

  /** A new stream first, then the list: nothing committed in between can fall through the gap. */
  async reconnect(): Promise<TurnView> {
    await this.openStream();
    this.merge(await history(this.client, this.sessionId));
    const reader = this.stream();
    if (!this.restingInKnown()) await reader.until((e) => e.type === "session.status_idle");
    return this.view();
  }

  async history(): Promise<HistoryTurn[]> {
    return managedTurns(await history(this.client, this.sessionId));
  }

  async close(): Promise<void> {
    await this.reader?.close();
    this.reader = null;
  }

  private async respond(event: SendEvent): Promise<TurnView> {
    const reader = this.stream();
    const from = reader.events.length;
    const [echo] = (await this.client.beta.sessions.events.send(this.sessionId, { events: [event] }))
      .data as unknown as WireEvent[];
    const at = reader.events.indexOf(await reader.until((e) => e.id === echo?.id, { from }));
    await reader.until((e) => e.type === "session.status_idle", { from: at });
    return this.view();
  }

  /** Sends `text` and returns the reader index of its echo once a delta of its reply arrived. */
  private async sendAndAwaitDelta(text: string): Promise<number> {
    const reader = this.stream();
    const from = reader.events.length;
    const [echo] = (
      await this.client.beta.sessions.events.send(this.sessionId, { events: [userMessage(text)] })
    ).data as unknown as WireEvent[];
    const at = reader.events.indexOf(await reader.until((e) => e.id === echo?.id, { from }));
    await reader.until((e) => e.type === "event_delta", { from: at });
    return at;
  }

  private view(): TurnView {
    this.absorb();
    return managedView(this.known);
  }

  private restingInKnown(): boolean {
    const last = this.known.at(-1);
    return last?.type === "session.status_idle";
  }

  private async openStream(): Promise<void> {
    this.reader = await StreamReader.open(this.client, this.sessionId, { event_deltas: ["agent.message"] });
    this.absorbed = 0;
  }

  private absorbed = 0;

  /** Moves what the stream delivered since the last look into `known`. */
  private absorb(): void {
    const reader = this.stream();
    this.merge(reader.events.slice(this.absorbed));
    this.absorbed = reader.events.length;
  }

  private merge(events: readonly WireEvent[]): void {
    const seen = new Set(this.known.map((e) => e.id));
    for (const event of events) {
      if (event.type === "event_delta" || seen.has(event.id)) continue;
      seen.add(event.id);
      this.known.push(event);
    }
  }

  private stream(): StreamReader {
    if (!this.reader) throw new Error("the Managed stream is closed");
    return this.reader;
  }
}
