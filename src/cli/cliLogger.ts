import { Option } from "commander";
import { type DestinationStream, type Logger, pino } from "pino";
import { activeTraceIds } from "../observability/openTelemetry.js";

const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};
/** Fields every line carries, shown in the line's head rather than repeated after it. */
const HEAD_FIELDS = new Set(["level", "time", "pid", "hostname", "msg", "component"]);

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/** `--log-level`, on every command that runs a server; `AWAKEN_LOG_LEVEL` when not given. */
export function logLevelOption(): Option {
  return new Option(
    "--log-level <level>",
    "the least severe log line written (default: AWAKEN_LOG_LEVEL, else info)",
  ).choices(LOG_LEVELS);
}

/**
 * The CLI's logger: pino JSON lines on stderr (stdout carries only the banner and command output),
 * or readable lines when stderr is a terminal (`AWAKEN_LOG_FORMAT=json` keeps JSON there too).
 * A line logged inside a traced operation carries its `trace_id` and `span_id`.
 */
export function cliLogger(env: NodeJS.ProcessEnv = process.env, logLevel?: string): Logger {
  const level = logLevel ?? env.AWAKEN_LOG_LEVEL ?? "info";
  const readable = process.stderr.isTTY === true && env.AWAKEN_LOG_FORMAT !== "json";
  return pino(
    { level, mixin: () => activeTraceIds() ?? {} },
    readable ? readableStderr() : pino.destination(2),
  );
}

function readableStderr(): DestinationStream {
  return {
    write: (line: string) => {
      process.stderr.write(`${formatLogLine(line)}\n`);
    },
  };
}

/** One pino JSON line as `HH:MM:SS.mmm LEVEL [component] message key=value…`; other text as is. */
export function formatLogLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trimEnd();
  }
  const time = typeof entry.time === "number" ? new Date(entry.time).toISOString().slice(11, 23) : "";
  const level = LEVELS[entry.level as number] ?? String(entry.level);
  const component = typeof entry.component === "string" ? ` [${entry.component}]` : "";
  const rest = Object.entries(entry)
    .filter(([key]) => !HEAD_FIELDS.has(key))
    .map(([key, value]) => ` ${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("");
  return `${time} ${level.padEnd(5)}${component} ${String(entry.msg ?? "")}${rest}`;
}
