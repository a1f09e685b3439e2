/**
 * For tests of code that runs outside any handler (close hooks, a stream's cleanup): what reached
 * the process's `uncaughtException` while a test ran, and every line a logger wrote. The arrays are
 * the same for the whole file and emptied before each test.
 */
import { Writable } from "node:stream";
import { type Logger, pino } from "pino";
import { afterEach, beforeEach } from "vitest";

export interface ProcessEscapes {
  escaped: unknown[];
  logLines: string[];
  /** An info-level logger writing into `logLines`. */
  logger: () => Logger;
}

export function watchProcessEscapes(): ProcessEscapes {
  const escaped: unknown[] = [];
  const logLines: string[] = [];
  const onEscape = (error: unknown) => escaped.push(error);
  beforeEach(() => {
    escaped.length = 0;
    logLines.length = 0;
    process.on("uncaughtException", onEscape);
  });
  afterEach(() => {
    process.off("uncaughtException", onEscape);
  });
  const logger = () =>
    pino(
      { level: "info" },
      new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
    );
  return { escaped, logLines, logger };
}
