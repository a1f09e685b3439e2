import { NO_STARTUP_FILES } from "./ports.js";

/** bash's arguments to run `script` with `$0` = `name`, reading no startup file. */
export function launcherBashArgs(script: string, name: string): string[] {
  return [...NO_STARTUP_FILES, "-c", script, name];
}
