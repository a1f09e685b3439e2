/** A derived image is admitted only pinned to a digest and only on its base's allow-list entry. */
import { describe, expect, it } from "vitest";
import { builtImageAdmissionProblem } from "../../src/kernel/containerImages.js";

const BASE = "localhost/base:1";
const BUILT = `127.0.0.1:5000/awaken/environments@sha256:${"a".repeat(64)}`;

describe("builtImageAdmissionProblem", () => {
  it("admits the digest-pinned build of an allowed base", () => {
    expect(builtImageAdmissionProblem(BUILT, BASE, [BASE])).toBeNull();
  });

  it("refuses a tag, a malformed reference, and a base the operator did not allow", () => {
    expect(builtImageAdmissionProblem("127.0.0.1:5000/awaken/environments:latest", BASE, [BASE])).toMatch(
      /not pinned to a sha256 digest/,
    );
    expect(builtImageAdmissionProblem(`--privileged@sha256:${"a".repeat(64)}`, BASE, [BASE])).not.toBeNull();
    expect(builtImageAdmissionProblem(BUILT, "localhost/other:1", [BASE])).toMatch(/allow-list/);
    expect(builtImageAdmissionProblem(BUILT, undefined, [BASE])).not.toBeNull();
  });
});
