import { Command, Option } from "commander";
import { API_KEY_ROLES } from "../control/apiKeyRoles.js";
import { callServer, DEFAULT_SERVER_URL } from "./serverCall.js";

const HELP = `
API keys authenticate users of the API. Each has a role, and each role includes the ones before it:
  runtime   sessions and their events on every protocol edge (Managed, AI SDK, AG-UI, A2A, MCP), models
  builder   also agents, environments, vaults and credentials (authoring and publishing)
  admin     also the workspace's API keys and environment keys
A runtime key may carry an agent allow-list (--agents a,b): it then starts and reaches only sessions
of those agents, on every edge; any other agent or session is answered as not found.
A key is shown once, when it is created; the server keeps only its HMAC-SHA-256 (under a key
derived from the master key). A revoked key is refused at once by the server that revoked it and,
on PostgreSQL, by every other replica (within 30 s if the revocation's notice is lost). Creating and revoking keys is recorded in the admin audit (see
awaken audit). These commands call the server over HTTP with an admin key:
  POST /v1/awaken/api_keys, GET /v1/awaken/api_keys, POST /v1/awaken/api_keys/{key_id}/revoke

Environment:
  AWAKEN_API_KEY   required: an admin key (awaken up prints the first one)
  AWAKEN_URL       used when --url is not given (default ${DEFAULT_SERVER_URL})

Examples:
  export APP_KEY=$(awaken api-keys create --role runtime --label checkout-app)
  awaken api-keys create --role runtime --agents agent_01…,agent_02… --label support-widget
  awaken api-keys create --role admin --workspace wrkspc_team-b   # a key of another workspace
  awaken api-keys list
  awaken api-keys revoke key_…
`;

interface Common {
  url?: string;
  json?: boolean;
}

interface ApiKeyDto {
  id: string;
  workspace_id: string;
  role: string;
  agent_ids?: string[] | null;
  label: string | null;
  key?: string;
  created_at: string;
  revoked_at: string | null;
}

function common(command: Command): Command {
  return command
    .addOption(
      new Option("--url <url>", `the server's base URL (default $AWAKEN_URL or ${DEFAULT_SERVER_URL})`),
    )
    .addOption(new Option("--json", "print the server's JSON response instead of text"));
}

function print(opts: Common, value: unknown, text: () => string): void {
  process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

function describe(k: ApiKeyDto): string {
  const state = k.revoked_at ? `revoked ${k.revoked_at}` : "active";
  const agents = k.agent_ids ? `  agents ${k.agent_ids.join(",")}` : "";
  return `${k.id}  ${k.role.padEnd(7)}  ${k.workspace_id}  ${JSON.stringify(k.label ?? "")}  created ${k.created_at}  ${state}${agents}`;
}

/** `awaken api-keys create|list|revoke`: manage the workspace's API keys over HTTP. */
export function apiKeysCommand(): Command {
  const command = new Command("api-keys")
    .description("Create, list and revoke API keys with roles (over HTTP, with an admin key).")
    .addHelpText("after", HELP);

  command.addCommand(
    common(
      new Command("create").description(
        "Create a key and print it (only this once; stdout holds the key alone unless --json).",
      ),
    )
      .addOption(
        new Option("--role <role>", "what the key may do").choices([...API_KEY_ROLES]).makeOptionMandatory(),
      )
      .addOption(new Option("--label <text>", "what the key is for, e.g. the application that holds it"))
      .addOption(
        new Option(
          "--workspace <id>",
          "another workspace (wrkspc_…; made if new); needs an admin key of the default one",
        ),
      )
      .addOption(
        new Option(
          "--agents <ids>",
          "comma-separated agent ids a runtime key is limited to (default: every agent)",
        ),
      )
      .action(
        async (opts: Common & { role: string; label?: string; workspace?: string; agents?: string }) => {
          const body = {
            role: opts.role,
            ...(opts.agents !== undefined
              ? {
                  agent_ids: opts.agents
                    .split(",")
                    .map((id) => id.trim())
                    .filter((id) => id !== ""),
                }
              : {}),
            ...(opts.label ? { label: opts.label } : {}),
            ...(opts.workspace ? { workspace_id: opts.workspace } : {}),
          };
          const key = (await callServer(opts.url, "POST", "/v1/awaken/api_keys", body)) as ApiKeyDto;
          if (!opts.json) {
            process.stderr.write(
              `Created ${key.id} (${key.role}, ${key.workspace_id}). The key below is shown only once; store it now.\n`,
            );
          }
          print(opts, key, () => key.key ?? "");
        },
      ),
  );

  command.addCommand(
    common(new Command("list").description("List the workspace's keys (never the keys themselves).")).action(
      async (opts: Common) => {
        const keys: ApiKeyDto[] = [];
        let page: string | null = null;
        do {
          const query: string = `?limit=100${page ? `&page=${encodeURIComponent(page)}` : ""}`;
          const result = (await callServer(opts.url, "GET", `/v1/awaken/api_keys${query}`)) as {
            data: ApiKeyDto[];
            next_page: string | null;
          };
          keys.push(...result.data);
          page = result.next_page;
        } while (page);
        print(opts, keys, () => (keys.length === 0 ? "no keys" : keys.map(describe).join("\n")));
      },
    ),
  );

  command.addCommand(
    common(
      new Command("revoke")
        .description("Revoke a key: refused from then on, on every replica.")
        .argument("<key_id>", "the key's id (key_…), as `list` shows it"),
    ).action(async (keyId: string, opts: Common) => {
      const path = `/v1/awaken/api_keys/${encodeURIComponent(keyId)}/revoke`;
      const key = (await callServer(opts.url, "POST", path)) as ApiKeyDto;
      print(opts, key, () => `revoked ${key.id} (${key.role}) at ${key.revoked_at}`);
    }),
  );
  return command;
}
