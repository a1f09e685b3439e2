import { Cron } from "croner";
import { invalid } from "../kernel/errors.js";
import type { CronSchedule } from "./ports.js";

/**
 * The SDK's schedule: a 5-field POSIX cron expression (minute hour day-of-month month day-of-week,
 * day-of-week 0-7 with 0 and 7 both Sunday) read as literal wall-clock time in an IANA time zone.
 * Croner computes the instants; what croner accepts beyond POSIX (seconds or year fields, L, W,
 * #, ?, @daily shortcuts) is refused here first, so every accepted schedule means what POSIX says.
 */

const FIELD_NAMES = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const;
const MONTHS = "JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC";
const DAYS = "SUN|MON|TUE|WED|THU|FRI|SAT";
const MAX_EXPRESSION = 256;
const MAX_TIMEZONE = 64;

/** One list element: `*`, a number or a range, each optionally stepped; month and weekday names too. */
function fieldPattern(names: string | null): RegExp {
  const atom = names ? `(?:\\d{1,2}|${names})` : "\\d{1,2}";
  const element = `(?:\\*|${atom}(?:-${atom})?)(?:/\\d{1,2})?`;
  return new RegExp(`^${element}(?:,${element})*$`, "i");
}
const FIELD_PATTERNS = [
  fieldPattern(null),
  fieldPattern(null),
  fieldPattern(null),
  fieldPattern(MONTHS),
  fieldPattern(DAYS),
];

/** An IANA zone name: letters, digits, `_`, `+`, `-` in `/`-separated parts (never a bare offset). */
const ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

function cronOf(schedule: CronSchedule): Cron {
  // POSIX semantics: day-of-month and day-of-week restricted together match either (croner's legacy OR).
  return new Cron(schedule.expression, {
    timezone: schedule.timezone,
    mode: "5-part",
    paused: true,
    legacyMode: true,
  });
}

/** Throws a 400 that says what is wrong, or returns the schedule as it will be stored. */
export function validateSchedule(schedule: CronSchedule): CronSchedule {
  const { expression, timezone } = schedule;
  if (
    timezone.length === 0 ||
    timezone.length > MAX_TIMEZONE ||
    !ZONE_SHAPE.test(timezone) ||
    !isZone(timezone)
  )
    throw invalid(
      `schedule.timezone: ${JSON.stringify(timezone.slice(0, MAX_TIMEZONE))} is not an IANA time zone identifier (e.g. "America/Los_Angeles", "UTC")`,
    );
  if (expression.length > MAX_EXPRESSION)
    throw invalid(`schedule.expression: at most ${MAX_EXPRESSION} characters`);
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || expression.trim() === "")
    throw invalid(
      "schedule.expression: expected 5 POSIX cron fields (minute hour day-of-month month day-of-week), e.g. " +
        '"0 9 * * 1-5"; seconds or year fields and shortcuts such as @daily are not supported',
    );
  fields.forEach((field, index) => {
    if (!FIELD_PATTERNS[index]?.test(field))
      throw invalid(
        `schedule.expression: the ${FIELD_NAMES[index]} field ${JSON.stringify(field)} is not POSIX cron ` +
          "(numbers, *, ranges a-b, lists a,b and steps /n; L, W, # and ? are not supported)",
      );
  });
  let cron: Cron;
  try {
    cron = cronOf({ expression: fields.join(" "), timezone });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, "") : "invalid";
    throw invalid(`schedule.expression: ${reason}`);
  }
  if (cron.nextRun(new Date(0)) === null && cron.nextRun() === null)
    throw invalid(`schedule.expression: ${JSON.stringify(expression)} never matches a date`);
  return { expression: fields.join(" "), timezone };
}

function isZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** The first `count` instants strictly after `afterMs` (epoch ms, whole minutes). */
export function instantsAfter(schedule: CronSchedule, afterMs: number, count: number): number[] {
  return cronOf(schedule)
    .nextRuns(count, new Date(afterMs))
    .map((d) => d.getTime());
}

/** The first instant strictly after `afterMs`, or null when the schedule never matches again. */
export function nextInstant(schedule: CronSchedule, afterMs: number): number | null {
  return cronOf(schedule).nextRun(new Date(afterMs))?.getTime() ?? null;
}

/**
 * Where a due schedule stands at `at`: the latest instant at or before `at` (the one to fire), how
 * many earlier instants since `fromMs` (the stored next instant, itself due) are skipped, and the
 * first instant after the one fired. Counting skips is bounded (a schedule down for a year).
 */
export function catchUp(
  schedule: CronSchedule,
  fromMs: number,
  at: number,
  maxCounted = 1_000,
): { fire: number; skipped: number; next: number | null } {
  const cron = cronOf(schedule);
  const [latest] = cron.previousRuns(1, new Date(at + 1));
  const fire = Math.max(fromMs, latest?.getTime() ?? fromMs);
  let skipped = 0;
  let cursor = fromMs;
  while (cursor < fire && skipped < maxCounted) {
    skipped += 1;
    cursor = cron.nextRun(new Date(cursor))?.getTime() ?? fire;
  }
  return { fire, skipped, next: cron.nextRun(new Date(fire))?.getTime() ?? null };
}
