import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** The core contexts, which read and build history through the typed fact vocabulary only. */
const CORE = ["coordinator", "runtime", "stores", "worker", "kernel"];

/**
 * The fact codec: the one place that knows how facts are stored (the Managed wire's encoding), and
 * how the session projection's pending and usage columns are (`facts/pendingCodec.ts`, `usageCodec.ts`).
 */
const CODEC = ["coordinator/factCodec.ts", "coordinator/facts/"];

/**
 * Managed Agents wire vocabulary: event type strings (in code or SQL) and the wire's field names for
 * tool ids, stops and denials. `tool_use_id` alone is not listed: the provider port's tool result
 * blocks use it (the model API's own shape), as the codec's internal facts do.
 */
const WIRE = [
  /["'](user|agent|system|session|span)\.[a-z_]+/,
  /custom_tool_use_id/,
  /mcp_tool_use_id/,
  /model_request_start_id/,
  /stop_reason/,
  /requires_action/,
  /deny_message/,
  // Stored answer kinds, stop reasons and usage counters: the core's own names differ (AnswerKind,
  // IdleReason, SessionUsage). OpenTelemetry's GenAI attribute names (`gen_ai.usage.…`) are not the wire.
  /custom_tool_result/,
  /end_turn/,
  /(?<!gen_ai\.[\w.]*)(input|output)_tokens/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

describe("the core speaks no wire", () => {
  it("no Managed Agents event type or field name appears in the core outside the fact codec", () => {
    const found: string[] = [];
    for (const context of CORE) {
      for (const file of sourceFiles(join(SRC, context))) {
        const path = relative(SRC, file).split(sep).join("/");
        if (CODEC.some((allowed) => path === allowed || path.startsWith(allowed))) continue;
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((line, index) => {
            for (const pattern of WIRE) {
              const match = pattern.exec(line);
              if (match) found.push(`${path}:${index + 1}: ${match[0]}`);
            }
          });
      }
    }
    expect(found).toEqual([]);
  });

  it("the scan sees the codec's own wire strings (so an empty result means something)", () => {
    const codec = sourceFiles(join(SRC, "coordinator/facts")).map((file) => readFileSync(file, "utf8"));
    for (const pattern of WIRE)
      expect(
        codec.some((text) => pattern.test(text)),
        String(pattern),
      ).toBe(true);
  });
});
