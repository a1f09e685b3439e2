import type { JsonObject, JsonValue } from "../../kernel/json.js";
import type { SessionMeter } from "../facts.js";
import { object } from "./bodyValues.js";

/**
 * The session meter as stored, beside the token counters in a commit's (or session's) usage column.
 * A key at its starting value is left out, so a session that never ran stores `{}` as before; a row
 * written before the meter existed reads as a session that cost nothing and never ran.
 */

const COST = /^(0|[1-9][0-9]*)$/;

export function decodeMeter(value: JsonValue | undefined): SessionMeter {
  const u = object(value);
  const cost = u.list_cost_nanocents;
  return {
    listCost: u.unpriced === true ? null : typeof cost === "string" && COST.test(cost) ? cost : "0",
    activeMs: typeof u.active_ms === "number" ? u.active_ms : 0,
    runningSince: typeof u.running_since === "number" ? u.running_since : null,
    endedAt: typeof u.ended_at === "number" ? u.ended_at : null,
  };
}

export function encodeMeter(meter: SessionMeter): JsonObject {
  const out: JsonObject = {};
  if (meter.listCost === null) out.unpriced = true;
  else if (meter.listCost !== "0") out.list_cost_nanocents = meter.listCost;
  if (meter.activeMs !== 0) out.active_ms = meter.activeMs;
  if (meter.runningSince !== null) out.running_since = meter.runningSince;
  if (meter.endedAt !== null) out.ended_at = meter.endedAt;
  return out;
}
