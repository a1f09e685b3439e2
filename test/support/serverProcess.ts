import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";

/** How long a server process may take to say it is listening before it is killed. */
const START_GUARD_MS = 45_000;

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY = `${ROOT}dist/cli/main.js`;
/** The line `awaken control` prints for its own door. */
const DOOR_LINE = /Operator API and Console: (http:\/\/\S+)/;

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Control's own door (`awaken control` without `--no-api`); null for the other commands. */
  apiUrl: string | null;
  client: Anthropic;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal name) once the process ended. */
  exited: Promise<number | string>;
}

/**
 * Starts the built `awaken up` as a real child process (as a user would run it) on an ephemeral
 * port and waits for the URL it prints.
 */
export async function startServerProcess(options: {
  dataDir: string;
  /**
   * Sent as AWAKEN_API_KEY (except to a coordinator, which refuses it: its keys are Control's), and
   * used by `client`; without it the server uses (or mints) its own key and `client` is unauthenticated.
   */
  apiKey?: string;
  /** `up` (the default), `control` or `coordinator`. */
  command?: "up" | "control" | "coordinator";
  env?: NodeJS.ProcessEnv;
  args?: string[];
}): Promise<ServerProcess> {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(
    process.execPath,
    [
      ENTRY,
      options.command ?? "up",
      "--port",
      "0",
      // Control's door on an ephemeral port too, so several Controls never collide on its default.
      ...(options.command === "control" ? ["--api-port", "0"] : []),
      "--data-dir",
      options.dataDir,
      ...(options.args ?? []),
    ],
    {
      env: {
        PATH: process.env.PATH,
        ...(options.apiKey && options.command !== "coordinator" ? { AWAKEN_API_KEY: options.apiKey } : {}),
        AWAKEN_LOG_LEVEL: "warn",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    err += chunk;
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  const door = options.command === "control" && !(options.args ?? []).includes("--no-api");
  const url = await new Promise<string>((resolve, reject) => {
    // A server that did not start in time is killed, so a failed start leaves no process behind.
    // A hang guard, not a speed bound: a start takes 2–3 s on an idle machine, but CI runs two
    // test files at a time on two cores (load ~7), where a Control starting on a fresh
    // PostgreSQL schema was seen to print nothing for 15 s.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not start in time:\n${out}\n${err}`));
    }, START_GUARD_MS);
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1] && (!door || DOOR_LINE.test(out))) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${out}\n${err}`));
    });
  });
  const apiUrl = door ? (DOOR_LINE.exec(out)?.[1] ?? null) : null;
  return {
    child,
    apiUrl,
    url,
    client: new Anthropic({ baseURL: url, apiKey: options.apiKey ?? "none", maxRetries: 0 }),
    stdout: () => out,
    stderr: () => err,
    exited,
  };
}
