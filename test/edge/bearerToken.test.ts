import { describe, expect, it } from "vitest";
import { bearerTokenCheck } from "../../src/edge/http/bearerToken.js";

describe("the shared-token check (worker transport, Control link)", () => {
  const matches = bearerTokenCheck("s3cret-token-of-enough-length");

  it("accepts the token as a bearer credential, whatever the scheme's case and the spacing", () => {
    expect(matches("Bearer s3cret-token-of-enough-length")).toBe(true);
    expect(matches("  bearer   s3cret-token-of-enough-length  ")).toBe(true);
  });

  it("refuses anything else: no header, another scheme, an empty, shorter, longer or different token", () => {
    for (const header of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "Basic s3cret-token-of-enough-length",
      "s3cret-token-of-enough-length",
      "Bearer s3cret-token-of-enough",
      "Bearer s3cret-token-of-enough-length-and-more",
      "Bearer S3CRET-TOKEN-OF-ENOUGH-LENGTH",
    ]) {
      expect(matches(header)).toBe(false);
    }
  });
});
