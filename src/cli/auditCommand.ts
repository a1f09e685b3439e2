import { Command, InvalidArgumentError, Option } from "commander";
import { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES } from "../control/adminAudit.js";
import { callServer, DEFAULT_SERVER_URL } from "./serverCall.js";

const HELP = `
The admin audit: every change to agents (create and update publish a version), environments,
vaults, credentials (update; rotate = a new secret revision; reseal = a revision's seal moved to a
new master key), API keys (create, revoke) and workspaces, newest first. Each entry says who made
it (the API key's id, or bootstrap: a server start; embedded: openAwaken's in-process client;
system: the server itself, e.g. a workspace's default environment or an mcp_oauth refresh; cli:
awaken secrets reseal), what (action, resource type and id, the version or revision it left
current), when, and SHA-256 digests of the secret-free view before and after.
No entry holds a secret, a key or a token. Each is written in the change's own transaction.
Entries of another workspace are never shown. This command calls the server over HTTP with an
admin key:
  GET /v1/awaken/audit?resource_type=&resource_id=&action=&limit=&page=

Environment:
  AWAKEN_API_KEY   required: an admin key (awaken up prints the first one)
  AWAKEN_URL       used when --url is not given (default ${DEFAULT_SERVER_URL})

Examples:
  awaken audit                                   # the newest 50 changes
  awaken audit --resource-type api_key --action revoke
  awaken audit --resource-id agent_01… --json
  awaken audit --all > audit.txt                 # every page
`;

interface AuditDto {
  id: string;
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string;
  revision: number | null;
  before_digest: string | null;
  after_digest: string | null;
  created_at: string;
}

interface Options {
  url?: string;
  json?: boolean;
  resourceType?: string;
  resourceId?: string;
  action?: string;
  limit: number;
  page?: string;
  all?: boolean;
}

function positiveLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw new InvalidArgumentError("a whole number from 1 to 100");
  return n;
}

const short = (digest: string | null) => (digest === null ? "-" : digest.slice(0, 12));

/** One line per entry, in columns: time, actor, action, resource, revision, digests (shortened). */
export function auditTable(entries: readonly AuditDto[]): string {
  if (entries.length === 0) return "no audit entries";
  const rows = [
    ["TIME", "ACTOR", "ACTION", "RESOURCE", "REV", "BEFORE", "AFTER"],
    ...entries.map((e) => [
      e.created_at,
      e.actor,
      e.action,
      `${e.resource_type} ${e.resource_id}`,
      e.revision === null ? "-" : String(e.revision),
      short(e.before_digest),
      short(e.after_digest),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `awaken audit`: read the workspace's admin audit over HTTP, newest first. */
export function auditCommand(): Command {
  return new Command("audit")
    .description("Show the admin audit (who changed which agent, environment, vault, credential or key).")
    .addOption(
      new Option("--resource-type <type>", "only this kind of resource").choices([...AUDIT_RESOURCE_TYPES]),
    )
    .addOption(
      new Option("--resource-id <id>", "only this resource (agent_…, env_…, vlt_…, vcrd_…, key_…, wrkspc_…)"),
    )
    .addOption(new Option("--action <action>", "only this action").choices([...AUDIT_ACTIONS]))
    .addOption(new Option("--limit <n>", "entries per page, 1–100").argParser(positiveLimit).default(50))
    .addOption(new Option("--page <cursor>", "continue from the cursor a previous page printed"))
    .addOption(new Option("--all", "follow every page to the oldest entry"))
    .addOption(
      new Option("--url <url>", `the server's base URL (default $AWAKEN_URL or ${DEFAULT_SERVER_URL})`),
    )
    .addOption(new Option("--json", "print the entries as JSON instead of a table"))
    .addHelpText("after", HELP)
    .action(async (opts: Options) => {
      const entries: AuditDto[] = [];
      let page: string | null = opts.page ?? null;
      do {
        const query = new URLSearchParams({ limit: String(opts.limit) });
        if (opts.resourceType) query.set("resource_type", opts.resourceType);
        if (opts.resourceId) query.set("resource_id", opts.resourceId);
        if (opts.action) query.set("action", opts.action);
        if (page) query.set("page", page);
        const result = (await callServer(opts.url, "GET", `/v1/awaken/audit?${query}`)) as {
          data: AuditDto[];
          next_page: string | null;
        };
        entries.push(...result.data);
        page = result.next_page;
      } while (opts.all && page);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ data: entries, next_page: page }, null, 2)}\n`);
        return;
      }
      process.stdout.write(`${auditTable(entries)}\n`);
      if (page) process.stderr.write(`More entries: awaken audit --page ${page} (or --all)\n`);
    });
}
