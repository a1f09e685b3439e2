import { Command, Option } from "commander";
import { callServer, DEFAULT_SERVER_URL as DEFAULT_URL } from "./serverCall.js";

const KEYS_HELP = `
Environment keys authenticate the worker of one self_hosted environment (the SDK's
client.beta.environments.work.worker / poller) on that environment's work routes, and nothing
else. Only self_hosted environments have keys. A key is shown once, when it is created; the server
keeps only its SHA-256 hash. These commands call the server over HTTP:
  POST /v1/awaken/environments/{id}/keys, GET …/keys, POST …/keys/{key_id}/revoke

Environment:
  AWAKEN_API_KEY   required: an API key of the server (awaken up prints it)
  AWAKEN_URL       used when --url is not given (default ${DEFAULT_URL})

Examples:
  export AWAKEN_ENVIRONMENT_KEY=$(awaken environment-keys create --environment env_… --name rack-7)
  awaken environment-keys list --environment env_…
  awaken environment-keys revoke envkey_… --environment env_…
`;

interface CommonOptions {
  url?: string;
  environment: string;
  json?: boolean;
}

interface KeyDto {
  id: string;
  environment_id: string;
  name: string | null;
  key?: string;
  key_hint: string;
  created_at: string;
  revoked_at: string | null;
}

function withCommonOptions(command: Command): Command {
  return command
    .addOption(new Option("--url <url>", `the server's base URL (default $AWAKEN_URL or ${DEFAULT_URL})`))
    .addOption(new Option("--environment <id>", "the self_hosted environment (env_…)").makeOptionMandatory())
    .addOption(new Option("--json", "print the server's JSON response instead of text"));
}

/** One call of this environment's key routes. */
function call(opts: CommonOptions, method: string, path: string, body?: unknown): Promise<unknown> {
  return callServer(
    opts.url,
    method,
    `/v1/awaken/environments/${encodeURIComponent(opts.environment)}/keys${path}`,
    body,
  );
}

function print(opts: CommonOptions, value: unknown, text: () => string): void {
  process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

function describeKey(k: KeyDto): string {
  const state = k.revoked_at ? `revoked ${k.revoked_at}` : "active";
  return `${k.id}  ${k.key_hint}  ${JSON.stringify(k.name ?? "")}  created ${k.created_at}  ${state}`;
}

/** `awaken environment-keys create|list|revoke`: manage a self_hosted environment's keys over HTTP. */
export function environmentKeysCommand(): Command {
  const command = new Command("environment-keys")
    .description("Create, list and revoke the keys of a self_hosted environment's workers (over HTTP).")
    .addHelpText("after", KEYS_HELP);

  command.addCommand(
    withCommonOptions(
      new Command("create").description(
        "Create a key and print it (only this once; stdout holds the key alone unless --json).",
      ),
    )
      .addOption(new Option("--name <name>", "a label for the key, e.g. the host that runs the worker"))
      .action(async (opts: CommonOptions & { name?: string }) => {
        const key = (await call(opts, "POST", "", opts.name ? { name: opts.name } : {})) as KeyDto;
        if (!opts.json) {
          process.stderr.write(
            `Created ${key.id} for ${key.environment_id}. The key below is shown only once; store it now.\n`,
          );
        }
        print(opts, key, () => key.key ?? "");
      }),
  );

  command.addCommand(
    withCommonOptions(
      new Command("list").description("List the environment's keys (never the keys themselves)."),
    ).action(async (opts: CommonOptions) => {
      const keys: KeyDto[] = [];
      let page: string | null = null;
      do {
        const query: string = `?limit=100${page ? `&page=${encodeURIComponent(page)}` : ""}`;
        const result = (await call(opts, "GET", query)) as { data: KeyDto[]; next_page: string | null };
        keys.push(...result.data);
        page = result.next_page;
      } while (page);
      print(opts, keys, () => (keys.length === 0 ? "no keys" : keys.map(describeKey).join("\n")));
    }),
  );

  command.addCommand(
    withCommonOptions(
      new Command("revoke")
        .description("Revoke a key: its worker is refused from then on (other replicas within 30 s).")
        .argument("<key_id>", "the key's id (envkey_…), as `list` shows it"),
    ).action(async (keyId: string, opts: CommonOptions) => {
      const key = (await call(opts, "POST", `/${encodeURIComponent(keyId)}/revoke`)) as KeyDto;
      print(opts, key, () => `revoked ${key.id} (${key.environment_id}) at ${key.revoked_at}`);
    }),
  );
  return command;
}
