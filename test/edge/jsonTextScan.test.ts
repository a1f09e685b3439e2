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

describe("scanJsonText with refuseNul", () => {
  const nul = { refuseNul: true };

  it("finds a \\u0000 escape in a value or a key and reports its path", () => {
    expect(scanJsonText('{"a":[1,"x\\u0000"]}', 64, nul)).toEqual({ path: ["a", 1], kind: "nul_character" });
    expect(scanJsonText('{"a":{"\\u0000k":1}}', 64, nul)).toEqual({
      path: ["a", "\u0000k"],
      kind: "nul_character",
      inKey: true,
    });
  });

  it("an escaped backslash before u0000 is text, not a NUL; one more backslash makes it one again", () => {
    expect(scanJsonText('{"a":"\\\\u0000","b":"\\\\\\\\u0000"}', 64, nul)).toBeNull();
    expect(scanJsonText('{"a":"\\\\\\u0000"}', 64, nul)).toEqual({ path: ["a"], kind: "nul_character" });
  });

  it("skips a first look-alike and still finds a later NUL", () => {
    expect(scanJsonText('{"a":"\\\\u0000","b":["ok","\\u0000"]}', 64, nul)).toEqual({
      path: ["b", 1],
      kind: "nul_character",
    });
  });

  it("is off unless asked for", () => {
    expect(scanJsonText('{"a":"\\u0000"}', 64)).toBeNull();
  });
});
