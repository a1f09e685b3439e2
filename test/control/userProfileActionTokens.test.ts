import { describe, expect, it } from "vitest";
import { applyDataControlsPatch, initialDataControls } from "../../src/control/googleDataControls.js";
import { decodeActionToken, encodeActionToken } from "../../src/control/userProfileActionTokens.js";

const KEY = Buffer.alloc(32, 7);
const CLAIMS = {
  workspaceId: "wrkspc_default",
  userProfileId: "uprof_0123456789abcdefghjkmnpqrs",
  action: "enroll_end_user" as const,
  expiresAt: 1_800_000_000_000,
};

describe("user profile action tokens", () => {
  it("round-trips under the key that signed them, and under no other", () => {
    const token = encodeActionToken(KEY, CLAIMS);
    expect(token).toMatch(/^upa_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeActionToken(KEY, token)).toEqual(CLAIMS);
    expect(decodeActionToken(Buffer.alloc(32, 8), token)).toBeNull();
  });

  it("refuses a changed payload, a changed signature and anything malformed", () => {
    const token = encodeActionToken(KEY, CLAIMS);
    const [payload, signature] = token.slice(4).split(".") as [string, string];
    const other = Buffer.from(
      JSON.stringify({ v: 1, ws: "wrkspc_x", up: CLAIMS.userProfileId, a: "enrollment", exp: 1 }),
    ).toString("base64url");
    expect(decodeActionToken(KEY, `upa_${other}.${signature}`)).toBeNull();
    expect(decodeActionToken(KEY, `upa_${payload}.${signature.slice(0, -2)}AA`)).toBeNull();
    for (const bad of ["", "upa_", "upa_.", `${token}.x`, token.slice(4), `upa_${"a".repeat(2000)}.b`])
      expect(decodeActionToken(KEY, bad)).toBeNull();
  });
});

describe("Google data controls (recorded only)", () => {
  const start = initialDataControls(1);

  it("merges regions, removes one with null, and turns a control off with its regions", () => {
    const on = applyDataControlsPatch(
      start,
      { cmek: { type: "enabled", external_key_ids: { us: "ekey_a", eu: "ekey_b" } } },
      2,
    );
    expect(on.cmek).toEqual({ enabled: true, externalKeyIds: { us: "ekey_a", eu: "ekey_b" } });
    const fewer = applyDataControlsPatch(
      on,
      { cmek: { type: "enabled", external_key_ids: { eu: null } } },
      3,
    );
    expect(fewer.cmek.externalKeyIds).toEqual({ us: "ekey_a" });
    expect(fewer.storage).toEqual(start.storage);
    const off = applyDataControlsPatch(fewer, { cmek: { type: "disabled" } }, 4);
    expect(off.cmek).toEqual({ enabled: false, externalKeyIds: {} });
    expect(off.updatedAt).toBe(4);
  });

  it("keeps the controls on an empty update; refuses an enabled control without a region, and one bucket for two regions", () => {
    // An empty update (the SDK's own example) changes nothing, not even the time.
    expect(applyDataControlsPatch(start, {}, 2)).toBe(start);
    expect(() => applyDataControlsPatch(start, { storage: { type: "enabled" } }, 2)).toThrow(
      /at least one region/,
    );
    const bucket = { project_number: "1", bucket_name: "shared" };
    expect(() =>
      applyDataControlsPatch(start, { storage: { type: "enabled", buckets: { us: bucket, eu: bucket } } }, 2),
    ).toThrow(/only one region/);
  });
});
