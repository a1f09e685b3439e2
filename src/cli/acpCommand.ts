import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_ENVIRONMENT_NAME } from "../coordinator/sessionEntryService.js";
import { acpAgent } from "../edge/acp/acpAgent.js";
import { type ServerSessions, serverSessions } from "../edge/acp/serverSessions.js";
import { DEFAULT_SERVER_URL } from "./serverCall.js";

const KEY_ENV = "AWAKEN_API_KEY";
const URL_ENV = "AWAKEN_URL";

const HELP = `
Speaks the Agent Client Protocol (ACP) on stdin/stdout, so an editor (Zed, or any ACP client)
can run an Awaken agent as its coding agent. The editor starts this command; each ACP session is
an ordinary session of the agent on the server (its ACP session id is the Awaken session id), so
the same conversation can be read or continued over the Managed Agents API and every other
protocol. The process is only a client of the server: it keeps no history of its own.

  session/new      creates a session of --agent (in --environment, else the workspace's
                   "${DEFAULT_ENVIRONMENT_NAME}" environment, made on first use)
  session/load     replays a session's committed history
  session/prompt   posts the prompt as a user message and streams the turn
  session/cancel   interrupts the turn
  A tool call the agent's permission policy asks about (always_ask) becomes the editor's
  permission question; the answer is posted back as the call's confirmation.

The API key: --api-key-file, ${KEY_ENV}, or --api-key (visible to other users of this host in the
process list: prefer the other two). It is never printed. Logs go to stderr; stdout carries
nothing but protocol messages.

Environment:
  ${KEY_ENV}   the API key (when neither --api-key-file nor --api-key is given)
  ${URL_ENV}       the server's base URL (when --url is not given; default ${DEFAULT_SERVER_URL})

Zed (settings.json):
  "agent_servers": {
    "Awaken": {
      "type": "custom",
      "command": "awaken",
      "args": ["acp", "--agent", "agent_01…", "--url", "https://awaken.example.com"],
      "env": { "${KEY_ENV}": "…" }
    }
  }
`;

function agentId(value: string): string {
  if (!/^agent_[0-9a-z]{1,64}$/.test(value)) throw new InvalidArgumentError("expected an agent id (agent_…)");
  return value;
}

function environmentId(value: string): string {
  if (!/^env_[0-9a-z]{1,64}$/.test(value))
    throw new InvalidArgumentError("expected an environment id (env_…)");
  return value;
}

function serverUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("expected an http(s) URL");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password) {
    throw new InvalidArgumentError("expected an http(s) URL without credentials");
  }
  return value.replace(/\/+$/, "");
}

function apiKeyFrom(opts: { apiKey?: string; apiKeyFile?: string }): string {
  const key = opts.apiKeyFile ? readFileSync(opts.apiKeyFile, "utf8") : (opts.apiKey ?? process.env[KEY_ENV]);
  if (!key?.trim()) throw new Error(`no API key: give --api-key-file, ${KEY_ENV} or --api-key`);
  return key.trim();
}

/** The environment new sessions run in: the one named, else the workspace's default (made when missing). */
function environmentResolver(api: ServerSessions, named: string | undefined, log: (m: string) => void) {
  let resolved: Promise<string> | undefined;
  return () => {
    if (named) return Promise.resolve(named);
    resolved ??= (async () => {
      const found = await api.findEnvironment(DEFAULT_ENVIRONMENT_NAME);
      if (found) return found;
      log(`making the workspace's "${DEFAULT_ENVIRONMENT_NAME}" environment`);
      return api.createEnvironment(
        DEFAULT_ENVIRONMENT_NAME,
        "Made for sessions started without an environment",
      );
    })();
    // A failed look-up is tried again by the next session/new.
    resolved.catch(() => {
      resolved = undefined;
    });
    return resolved;
  };
}

/** `awaken acp`: an ACP agent on stdio for editors, backed by an agent of an Awaken server. */
export function acpCommand(version: string): Command {
  return new Command("acp")
    .description("Run an agent as an Agent Client Protocol (ACP) agent on stdio, for editors such as Zed.")
    .requiredOption("--agent <id>", "the agent the editor talks to", agentId)
    .addOption(
      new Option("--environment <id>", "the environment new sessions run in").argParser(environmentId),
    )
    .addOption(
      new Option("--url <url>", `the server's base URL (default ${DEFAULT_SERVER_URL})`)
        .env(URL_ENV)
        .argParser(serverUrl),
    )
    .addOption(new Option("--api-key-file <path>", "a file holding the API key"))
    .addOption(new Option("--api-key <key>", `the API key (prefer --api-key-file or ${KEY_ENV})`))
    .addHelpText("after", HELP)
    .action(async (opts) => {
      const log = (message: string) => process.stderr.write(`awaken acp: ${message}\n`);
      // stdout is the protocol's: anything a library prints goes to stderr instead.
      console.log = console.error;
      console.info = console.error;
      console.debug = console.error;
      let key: string;
      try {
        key = apiKeyFrom(opts);
      } catch (error) {
        log(error instanceof Error ? error.message : String(error));
        process.exitCode = 1;
        return;
      }
      const api = serverSessions(opts.url ?? DEFAULT_SERVER_URL, key);
      const app = acpAgent({
        api,
        agentId: opts.agent,
        environmentId: environmentResolver(api, opts.environment, log),
        version,
        log,
      });
      const connection = app.connect(
        ndJsonStream(
          Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
          Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
        ),
      );
      await connection.closed;
      // The editor closed stdin: open HTTP streams must not keep the process alive.
      process.exit(process.exitCode ?? 0);
    });
}
