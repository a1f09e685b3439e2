import type { Metrics } from "../../src/kernel/metrics.js";

/** A Metrics port that records every call by method name, for tests of who reports what. */
export function recordingMetrics(): Metrics & { calls: Array<[keyof Metrics, ...unknown[]]> } {
  const calls: Array<[keyof Metrics, ...unknown[]]> = [];
  const record =
    (name: keyof Metrics) =>
    (...args: unknown[]) => {
      calls.push([name, ...args]);
    };
  return {
    calls,
    modelRequest: record("modelRequest"),
    toolCall: record("toolCall"),
    commit: record("commit"),
    fenceRejected: record("fenceRejected"),
    runClaimed: record("runClaimed"),
    crashBudgetExhausted: record("crashBudgetExhausted"),
    sandboxRealized: record("sandboxRealized"),
    credentialOpen: record("credentialOpen"),
    runSettled: record("runSettled"),
    pushDelivery: record("pushDelivery"),
    httpRequest: record("httpRequest"),
    streamOpened: () => {
      calls.push(["streamOpened"]);
      return () => {};
    },
  };
}
