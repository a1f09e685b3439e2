import { Command, Option } from "commander";
import { acpRuntimeCatalogFrom } from "../brains/catalog.js";
import { acpRuntimesOption } from "./acpRuntimesOption.js";
import { startAllInOne } from "./allInOne.js";
import { cliLogger, logLevelOption } from "./cliLogger.js";
import { installShutdown, integer, portNumber } from "./commandSupport.js";
import { apiKeyBannerLine } from "./controlPlane.js";
import { startControl } from "./controlServer.js";
import { allowPrivateHostOption } from "./outbound.js";
import { checkSplitConfig, peerUrl, SplitConfigError } from "./splitConfig.js";
import { DEFAULT_DB_POOL_SIZE } from "./storage.js";
import { addServerOptions, serverOptionsFrom } from "./upCommand.js";

const CONTROL_HELP = `
Control owns authoring and publication history (agents), IAM (API keys, access tokens), vaults and
credentials (the master key lives only here), the admin audit and data-subject consent. Clients
reach it through the coordinator, which forwards over a private link (--port). Operators also have
Control's own door (--api-port): the same routes for agents, vaults and credentials, API keys,
access tokens, the audits, consent and user profiles (all but a delete, which erases content the
coordinator holds), with the same API keys, and the Console for those pages.
It answers while every coordinator is down; agents published then register once one is back.

Environment:
  AWAKEN_CONTROL_TOKEN  required: the private Control↔Coordinator token, the same on both (≥ 32 characters)
  AWAKEN_COORDINATOR_URL  used when --coordinator-url is not given
  AWAKEN_MASTER_KEY     base64 32-byte key that seals vault credentials (else generated once into
                        <data-dir>/master.key, mode 0600); back it up
  AWAKEN_API_KEY        API key of the default workspace (else generated once into <data-dir>/api-key)
  AWAKEN_METRICS_TOKEN  when set (≥ 16 characters), GET /metrics requires Authorization: Bearer <token>

Refused at start-up: AWAKEN_WORKER_TOKEN (Control serves no workers), a missing or short control
token, a missing coordinator URL.
`;

const COORDINATOR_HELP = `
The coordinator owns sessions, dispatch, claims, commits, the executable agent catalog and the
erasure of captured content. It serves the whole public API (one base URL for clients) and forwards
authoring, vault and IAM calls to Control over the private link; workers (awaken worker) claim runs
from it with AWAKEN_WORKER_TOKEN.

Environment:
  AWAKEN_CONTROL_TOKEN  required: the private Control↔Coordinator token, the same on both (≥ 32 characters)
  AWAKEN_CONTROL_URL    used when --control-url is not given
  AWAKEN_WORKER_TOKEN   remote workers' shared token (≥ 16 characters); unset, no worker can connect
  AWAKEN_METRICS_TOKEN  when set (≥ 16 characters), GET /metrics requires Authorization: Bearer <token>
  AWAKEN_TRACE_CONTENT  on: its in-process workers' spans may carry content of sessions that ask and
                        whose data subject consented (Control's consent, read at each claim); off (default)

Refused at start-up: AWAKEN_MASTER_KEY, AWAKEN_MASTER_KEY_RETIRED or a master.key in the data dir
(the seal key lives only in Control), AWAKEN_API_KEY (keys are Control's), a missing or short
control token, a missing Control URL.
`;

/** Prints a refused configuration and exits 2, as `awaken worker` does. */
function refuse(role: string, error: unknown): never {
  if (!(error instanceof SplitConfigError)) throw error;
  console.error(`awaken ${role} refuses to start: ${error.message}`);
  process.exit(2);
}

/** `awaken control`: Control alone. */
export function controlCommand(): Command {
  return new Command("control")
    .description("Run Control alone (authoring, IAM, vaults, audit, consent) for a split deployment.")
    .addOption(new Option("--host <host>", "address to listen on").default("127.0.0.1"))
    .addOption(
      new Option("--port <port>", "port of the private link the coordinator calls")
        .default(4100)
        .argParser(portNumber("--port")),
    )
    .addOption(
      new Option("--api-port <port>", "port of Control's own door, the operator API and the Console")
        .default(4101)
        .argParser(portNumber("--api-port")),
    )
    .addOption(new Option("--no-api", "serve no operator API of its own (operators use the coordinator)"))
    .addOption(logLevelOption())
    .addOption(
      new Option("--data-dir <dir>", "where the master key and the bootstrap API key live").default(
        ".awaken-control",
      ),
    )
    .addOption(
      new Option(
        "--database-url <url>",
        "Control's PostgreSQL (postgres://…); else SQLite in the data dir",
      ).env("AWAKEN_DATABASE_URL"),
    )
    .addOption(
      new Option("--db-pool-size <n>", "with --database-url: the most connections opened for queries")
        .default(DEFAULT_DB_POOL_SIZE)
        .argParser(integer("--db-pool-size", 1)),
    )
    .addOption(
      new Option(
        "--coordinator-url <urls>",
        "the coordinator's base URL (or its replicas', comma-separated), e.g. http://coordinator:4000",
      ),
    )
    .addOption(allowPrivateHostOption())
    .addOption(acpRuntimesOption())
    .addOption(
      new Option(
        "--rebuild-catalog",
        "register every publication with the coordinator again (after its catalog was lost); safe to repeat",
      ),
    )
    .addHelpText("after", CONTROL_HELP)
    .action(async (opts) => {
      const logger = cliLogger(process.env, opts.logLevel);
      let checked: { token: string; coordinatorUrl: string };
      try {
        const { token } = checkSplitConfig("control", process.env, opts.dataDir);
        const coordinatorUrl = peerUrl(
          "--coordinator-url",
          opts.coordinatorUrl ?? process.env.AWAKEN_COORDINATOR_URL,
          "http://coordinator:4000",
        );
        checked = { token, coordinatorUrl };
      } catch (error) {
        refuse("control", error);
      }
      const lifecycle = installShutdown(logger, "control");
      const control = await startControl(
        {
          host: opts.host,
          port: opts.port,
          dataDir: opts.dataDir,
          databaseUrl: opts.databaseUrl,
          dbPoolSize: opts.dbPoolSize,
          coordinatorUrl: checked.coordinatorUrl,
          controlToken: checked.token,
          apiKey: process.env.AWAKEN_API_KEY || undefined,
          allowPrivateHosts: opts.allowPrivateMcpHost,
          env: process.env,
          rebuildCatalog: opts.rebuildCatalog === true,
          acpRuntimes: acpRuntimeCatalogFrom(opts.acpRuntimes),
          api: opts.api === false ? null : { host: opts.host, port: opts.apiPort },
        },
        logger,
      );
      if (!(await lifecycle.ready(control))) return;
      const keyLine = apiKeyBannerLine(control.apiKey, control.apiKeySource, opts.dataDir);
      process.stdout.write(
        `Awaken Control is listening on ${control.url} (the private link the coordinator calls)\n` +
          (control.apiUrl
            ? `Operator API and Console: ${control.apiUrl} (agents, vaults, keys, audits, consent)\n`
            : "") +
          keyLine +
          `Storage: ${control.storage}\n`,
      );
    });
}

/** `awaken coordinator`: the Coordinator, serving the public API, with Control over the link. */
export function coordinatorCommand(): Command {
  const command = new Command("coordinator").description(
    "Run the Coordinator (sessions, dispatch, commits, the public API) for a split deployment.",
  );
  // Not the all-in-one's `.awaken`: that may hold a master key, which a coordinator never holds.
  addServerOptions(command, {
    port: 4000,
    workers: 0,
    dataDir: ".awaken-coordinator",
    // Keys and the master key are Control's: the coordinator refuses both.
    dataDirHolds: "the coordinator's files (and the SQLite database, without --database-url)",
    unsandboxedReach: "the data dir and the worker and control tokens in this process's environment",
  });
  command.addOption(new Option("--control-url <url>", "Control's base URL, e.g. http://control:4100"));
  return command.addHelpText("after", COORDINATOR_HELP).action(async (opts) => {
    const logger = cliLogger(process.env, opts.logLevel);
    let control: { url: string; token: string };
    try {
      const { token } = checkSplitConfig("coordinator", process.env, opts.dataDir);
      control = {
        url: peerUrl(
          "--control-url",
          opts.controlUrl ?? process.env.AWAKEN_CONTROL_URL,
          "http://control:4100",
        ),
        token,
      };
    } catch (error) {
      refuse("coordinator", error);
    }
    const lifecycle = installShutdown(logger, "coordinator", opts.drainMs);
    const server = await startAllInOne(
      {
        ...serverOptionsFrom(opts, logger),
        apiKey: undefined,
        workerToken: process.env.AWAKEN_WORKER_TOKEN || undefined,
        control,
      },
      logger,
    );
    if (!(await lifecycle.ready(server))) return;
    process.stdout.write(
      `Awaken coordinator is listening on ${server.url} (Control: ${control.url})\n` +
        `Try it:  new Anthropic({ baseURL: "${server.url}", apiKey: "<a key Control printed or minted>" })\n` +
        `Storage: ${server.storage}\n`,
    );
  });
}
