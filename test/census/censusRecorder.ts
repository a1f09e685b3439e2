/**
 * Watches what a scenario does with the official client: every Managed operation it calls and
 * whether the answer has the SDK's declared type. The scenario keeps the SDK's own typed client
 * (wrapped in a proxy), so it reads like any other test; the recorder only looks at the answers.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { SdkOperation, SdkSurface } from "./sdkSurface.js";
import { conformance } from "./typeConformance.js";

export interface OperationRecord {
  /** Answers that came back (2xx). */
  answered: number;
  /** Values checked: one per answer, one per page item or streamed event. */
  checked: number;
  /** The first mismatches seen, each `path: what`. */
  mismatches: string[];
}

const MAX_MISMATCHES = 12;

export class CensusRecorder {
  readonly records = new Map<string, OperationRecord>();
  private readonly byPath: Map<string, SdkOperation>;
  private readonly pending: Array<Promise<unknown>> = [];

  constructor(private readonly surface: SdkSurface) {
    this.byPath = new Map(surface.operations.map((op) => [op.path, op]));
  }

  /** The client, with every Managed resource method observed. */
  watch(client: Anthropic): Anthropic {
    return this.proxy(client, "") as Anthropic;
  }

  /** The events a scenario read from a stream operation, checked against the stream's event type. */
  streamed(path: string, events: readonly unknown[]): void {
    const op = this.operation(path);
    for (const event of events) this.check(op, event);
  }

  /** Waits for every answer the scenario started to be checked. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.pending);
  }

  private operation(path: string): SdkOperation {
    const op = this.byPath.get(path);
    if (!op) throw new Error(`${path} is not an operation of the SDK's Managed family`);
    return op;
  }

  private record(path: string): OperationRecord {
    let record = this.records.get(path);
    if (!record) {
      record = { answered: 0, checked: 0, mismatches: [] };
      this.records.set(path, record);
    }
    return record;
  }

  private check(op: SdkOperation, value: unknown): void {
    const record = this.record(op.path);
    record.checked += 1;
    if (!op.type || record.mismatches.length >= MAX_MISMATCHES) return;
    for (const mismatch of conformance(this.surface.checker, value, op.type)) {
      if (record.mismatches.length < MAX_MISMATCHES && !record.mismatches.includes(mismatch)) {
        record.mismatches.push(mismatch);
      }
    }
  }

  /** Resources are the objects holding the client; their methods at a Managed path are observed. */
  private proxy(target: object, path: string): object {
    return new Proxy(target, {
      get: (object, property, receiver) => {
        const value: unknown = Reflect.get(object, property, receiver);
        if (typeof property !== "string" || property.startsWith("_")) return value;
        const at = path ? `${path}.${property}` : property;
        if (typeof value === "function") {
          const op = this.byPath.get(at);
          // Other methods (the client's own `post`, `get`) keep their object: they read its private fields.
          if (!op) return (value as (...a: unknown[]) => unknown).bind(object);
          return (...args: unknown[]) => {
            const answer = (value as (...a: unknown[]) => unknown).apply(object, args);
            this.observe(op, answer as PromiseLike<unknown>);
            return answer;
          };
        }
        if (value !== null && typeof value === "object" && "_client" in value) return this.proxy(value, at);
        return value;
      },
    });
  }

  /** Reads the answer beside the scenario (an SDK promise parses once, whoever awaits it). */
  private observe(op: SdkOperation, answer: PromiseLike<unknown>): void {
    const seen = Promise.resolve(answer).then(
      (value) => {
        this.record(op.path).answered += 1;
        if (op.kind === "value") this.check(op, value);
        if (op.kind === "page") {
          for (const item of (value as { getPaginatedItems(): unknown[] }).getPaginatedItems())
            this.check(op, item);
        }
        if (op.kind === "bytes" && !(value as Response).ok)
          this.record(op.path).mismatches.push("download not ok");
      },
      () => undefined,
    );
    this.pending.push(seen);
  }
}
