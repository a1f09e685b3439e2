import { describe, expect, it } from "vitest";
import { TurnBatcher } from "../../src/stores/postgres/turnBatcher.js";

describe("TurnBatcher: group commit per event-loop turn", () => {
  it("requests of one turn leave together; a later turn's leave in a batch of their own", async () => {
    const calls: number[][] = [];
    const batcher = new TurnBatcher<number, number>(async (inputs) => {
      calls.push(inputs);
      return inputs.map((n) => n * 10);
    });
    const first = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    const second = await batcher.submit(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(calls).toEqual([[1, 2, 3], [4]]);
  });

  it("from `splitFrom` requests on, a turn's requests leave as two calls in flight at once", async () => {
    const calls: number[][] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const batcher = new TurnBatcher<number, number>(async (inputs) => {
      calls.push(inputs);
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return inputs;
    });
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => batcher.submit(i)));
    expect(answers).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(calls).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(mostInFlight).toBe(2);
  });

  it("batch sizes: whole below splitFrom, halves from it, never above maxBatch", () => {
    const batcher = new TurnBatcher<number, number>(async (inputs) => inputs, { maxBatch: 64, splitFrom: 8 });
    expect([1, 7, 8, 9, 64, 128, 200].map((n) => batcher.batchSize(n))).toEqual([1, 7, 4, 5, 32, 64, 64]);
  });

  it("a failed call rejects exactly its own requests; a short answer is an error, not a hang", async () => {
    const failing = new TurnBatcher<number, number>(
      async (inputs) => {
        if (inputs.includes(0)) throw new Error("boom");
        return inputs;
      },
      { splitFrom: 4 },
    );
    const settled = await Promise.allSettled([0, 1, 2, 3].map((n) => failing.submit(n)));
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected", "fulfilled", "fulfilled"]);

    const short = new TurnBatcher<number, number>(async (inputs) => inputs.slice(1));
    const answers = await Promise.allSettled([1, 2].map((n) => short.submit(n)));
    expect(answers[0]).toMatchObject({ status: "fulfilled", value: 2 });
    expect(answers[1]).toMatchObject({ status: "rejected", reason: { message: /fewer inputs/ } });
  });
});
