import { describe, expect, it } from "vitest";
import { scanJsonText } from "../../src/edge/http/jsonTextScan.js";

describe("scanJsonText", () => {
  it("counts containers from the root and reports the path where the limit is passed", () => {
    expect(scanJsonText('{"a":[{"b":1}]}', 3)).toBeNull();
    expect(scanJsonText('{"a":[{"b":{}}]}', 3)).toEqual({ path: ["a", 0, "b"], kind: "too_deep" });
    expect(scanJsonText("[1, 2, [3, [4]]]", 2)).toEqual({ path: [2, 1], kind: "too_deep" });
  });

  it("survives 100 000 levels and stops at the limit", () => {
    const text = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(scanJsonText(text, 64)?.path).toHaveLength(64);
  });

  it("ignores brackets, quotes and escapes inside strings", () => {
    expect(scanJsonText('{"a":"[[[{{{\\"[[[", "b\\\\":"]]]"}', 1)).toBeNull();
    expect(scanJsonText('{"x\\"y":{"z":[]}}', 2)).toEqual({ path: ['x"y', "z"], kind: "too_deep" });
  });

  it("refuses __proto__ anywhere, also when escaped, and prototype inside constructor", () => {
    expect(scanJsonText('{"a":[{"__proto__":{}}]}', 64)).toEqual({
      path: ["a", 0, "__proto__"],
      kind: "forbidden_key",
    });
    expect(scanJsonText('{"\\u005f_proto__":1}', 64)).toEqual({ path: ["__proto__"], kind: "forbidden_key" });
    expect(scanJsonText('{"constructor":{"prototype":{}}}', 64)).toEqual({
      path: ["constructor", "prototype"],
      kind: "forbidden_key",
    });
    // The names alone, as values or elsewhere, are fine.
    expect(scanJsonText('{"constructor":{"type":"string"},"prototype":1,"v":"__proto__"}', 64)).toBeNull();
    expect(scanJsonText('{"constructor":[{"prototype":1}]}', 64)).toBeNull();
  });

  it("leaves syntax to JSON.parse: an unterminated text is not a problem here", () => {
    expect(scanJsonText('{"a": "open', 64)).toBeNull();
  });
});
