/**
 * The NOTIFY payload codec: every kind travels and comes back as sent; a key's revocation carries its
 * id only; a kind this version does not know (a newer replica's) is ignored, a malformed payload refused.
 */
import { describe, expect, it } from "vitest";
import {
  decodeWakeNotice,
  encodeWakeNotice,
  type WakeNotice,
} from "../../src/stores/postgres/wakeNotices.js";

describe("wake notice payloads", () => {
  it("each kind comes back as it was sent, with its sender", () => {
    const notices: WakeNotice[] = [
      { kind: "thread", thread: "thr_1", version: 7 },
      { kind: "dispatch", run: "run_1" },
      { kind: "dispatch" },
      { kind: "cancel", run: "run_2" },
      { kind: "revoked", key: "key_01" },
    ];
    for (const notice of notices)
      expect(decodeWakeNotice(encodeWakeNotice("abc", notice))).toEqual({ from: "abc", ...notice });
  });

  it("a revocation names the key's id and nothing else", () => {
    expect(JSON.parse(encodeWakeNotice("abc", { kind: "revoked", key: "key_01" }))).toEqual({
      from: "abc",
      kind: "revoked",
      key: "key_01",
    });
  });

  it("the same notice from the same sender is the same payload (a commit's carried payload is matched by it)", () => {
    expect(encodeWakeNotice("abc", { kind: "thread", thread: "thr_1", version: 2 })).toBe(
      '{"from":"abc","kind":"thread","thread":"thr_1","version":2}',
    );
  });

  it("a kind it does not know is ignored, not refused", () => {
    expect(decodeWakeNotice('{"from":"abc","kind":"rotated","key":"key_01"}')).toBeNull();
    expect(decodeWakeNotice('{"from":"abc","kind":"later"}')).toBeNull();
  });

  it("a malformed payload of a known kind, or no kind at all, is refused", () => {
    for (const raw of [
      "",
      "not json",
      "null",
      "[]",
      '{"from":"abc"}',
      '{"from":"abc","kind":7}',
      '{"from":"abc","kind":"revoked"}',
      '{"from":"abc","kind":"revoked","key":1}',
      '{"kind":"thread","thread":"thr_1","version":1}',
      '{"from":"abc","kind":"thread","thread":"thr_1","version":"1"}',
    ])
      expect(() => decodeWakeNotice(raw), raw).toThrow();
  });
});
