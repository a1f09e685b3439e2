import { describe, expect, it } from "vitest";
import {
  type CaptureConsents,
  cappedJson,
  cappedText,
  captureRequestedBy,
  claimCapturesContent,
  MAX_CAPTURED_BYTES,
  recordsContent,
  TRUNCATED_MARKER,
  traceContentCeiling,
} from "../../src/kernel/contentCapture.js";

/** A consent port answering `granted` for one subject, counting its lookups. */
function consents(granted: boolean) {
  const calls: Array<[string, string, string]> = [];
  const port: CaptureConsents = {
    consented: async (workspaceId, subjectId, purpose) => {
      calls.push([workspaceId, subjectId, purpose]);
      return granted;
    },
  };
  return { port, calls };
}

/** The whole decision: the coordinator's half at the claim, then the worker's ceiling. */
async function captured(ceiling: boolean, requested: boolean, subject: string | null, consented: boolean) {
  const { port, calls } = consents(consented);
  const decided = await claimCapturesContent("wrkspc_1", requested ? { dataSubject: subject } : null, port);
  return { recorded: recordsContent(ceiling, decided), lookups: calls.length, calls };
}

describe("content capture: the least of the operator's ceiling, the request and the consent", () => {
  // ceiling × request × consent, for a session that names a data subject.
  const table: Array<[boolean, boolean, boolean, boolean]> = [
    [false, false, false, false],
    [false, false, true, false],
    [false, true, false, false],
    [false, true, true, false],
    [true, false, false, false],
    [true, false, true, false],
    [true, true, false, false],
    [true, true, true, true],
  ];
  it.each(table)(
    "ceiling %s, requested %s, consented %s → captured %s",
    async (ceiling, requested, consent, expected) => {
      const { recorded, lookups, calls } = await captured(ceiling, requested, "user-42", consent);
      expect(recorded).toBe(expected);
      // Only a session that asked costs a consent lookup, for its own subject and the one purpose.
      expect(lookups).toBe(requested ? 1 : 0);
      if (requested) expect(calls[0]).toEqual(["wrkspc_1", "user-42", "content_capture_telemetry"]);
    },
  );

  it("a session that names no data subject needs no consent (and costs no lookup)", async () => {
    expect(await captured(true, true, null, false)).toMatchObject({ recorded: true, lookups: 0 });
    expect(await captured(false, true, null, false)).toMatchObject({ recorded: false, lookups: 0 });
    expect(await captured(true, false, null, true)).toMatchObject({ recorded: false, lookups: 0 });
  });

  it("a consent lookup that fails, or no consent port, captures nothing", async () => {
    const failing: CaptureConsents = { consented: () => Promise.reject(new Error("link down")) };
    expect(await claimCapturesContent("w", { dataSubject: "u" }, failing)).toBe(false);
    expect(await claimCapturesContent("w", { dataSubject: "u" }, undefined)).toBe(false);
    expect(await claimCapturesContent("w", { dataSubject: null }, undefined)).toBe(true);
  });

  it("the worker records only with both its ceiling and the claim's decision", () => {
    expect(recordsContent(true, true)).toBe(true);
    expect(recordsContent(true, undefined)).toBe(false); // an older coordinator sends no decision
    expect(recordsContent(undefined, true)).toBe(false);
    expect(recordsContent(false, true)).toBe(false);
  });
});

describe("the request and the ceiling are validated", () => {
  it('awaken_capture_content takes only "telemetry"', () => {
    expect(captureRequestedBy({})).toBe(false);
    expect(captureRequestedBy({ ticket: "T-1" })).toBe(false);
    expect(captureRequestedBy({ awaken_capture_content: "telemetry" })).toBe(true);
    for (const value of ["", "on", "Telemetry", "true"])
      expect(() => captureRequestedBy({ awaken_capture_content: value })).toThrow(
        /awaken_capture_content.*"telemetry"/,
      );
  });

  it("AWAKEN_TRACE_CONTENT is on or off (default off); anything else names itself", () => {
    expect(traceContentCeiling({})).toBe(false);
    expect(traceContentCeiling({ AWAKEN_TRACE_CONTENT: "off" })).toBe(false);
    expect(traceContentCeiling({ AWAKEN_TRACE_CONTENT: "on" })).toBe(true);
    for (const value of ["1", "true", "ON", "yes"])
      expect(() => traceContentCeiling({ AWAKEN_TRACE_CONTENT: value })).toThrow(
        new RegExp(`AWAKEN_TRACE_CONTENT.*"${value}"`),
      );
  });
});

describe("captured content is capped at 16 KiB with a marker", () => {
  const message = (content: string) => [{ role: "user", parts: [{ type: "text", content }] }];

  it("short content is kept whole", () => {
    expect(JSON.parse(cappedJson("hello", message))).toEqual(message("hello"));
    expect(cappedText("hello")).toBe("hello");
  });

  it("long content is cut to fit, ends with the marker and stays valid JSON", () => {
    for (const unit of ["a", "é", "😀", '"\n']) {
      const long = unit.repeat(40_000);
      const json = cappedJson(long, message);
      expect(Buffer.byteLength(json, "utf8")).toBeLessThanOrEqual(MAX_CAPTURED_BYTES);
      const content = (JSON.parse(json) as ReturnType<typeof message>)[0]?.parts[0]?.content ?? "";
      expect(content.endsWith(TRUNCATED_MARKER)).toBe(true);
      expect(content.length).toBeGreaterThan(MAX_CAPTURED_BYTES / 8);
      // Never half a surrogate pair.
      expect(content).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
      const text = cappedText(long);
      expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(MAX_CAPTURED_BYTES);
      expect(text.endsWith(TRUNCATED_MARKER)).toBe(true);
    }
  });
});
