import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Command, Option } from "commander";
import { type ResealReport, resealCredentialRevisions } from "../control/masterKeyReseal.js";
import { LocalSecretStore } from "../secrets/localSecretStore.js";
import {
  generateMasterKey,
  loadMasterKey,
  loadRetiredMasterKeys,
  MASTER_KEY_ENV,
  MASTER_KEY_RETIRED_ENV,
  type MasterKey,
  readMasterKeyFile,
  rotateMasterKeyFile,
} from "../secrets/masterKey.js";
import { openPostgres, redact } from "../stores/postgres/openPostgres.js";
import { SqlCredentialStore } from "../stores/sql/sqlCredentialStore.js";
import { SqlInstallationFacts } from "../stores/sql/sqlInstallationFacts.js";
import { openSqlite } from "../stores/sqlite/openSqlite.js";
import { integer } from "./commandSupport.js";
import { STORAGE_HELP } from "./migrateCommand.js";
import { sqliteFile } from "./storage.js";

const ROTATION_HELP = `
A master-key rotation takes two steps, then a wait:

  1. Make a new key current and keep the old one as retired:
       awaken secrets rotate-master-key --data-dir DIR [--new-key-file FILE]
     The current DIR/master.key is kept as DIR/master.key.retired-<key id> (mode 0600) and the new
     key (generated, or read from FILE: base64 of 32 bytes, mode 0600) replaces DIR/master.key.
     Restart the server: it seals under the new key and still opens records under every retired
     key (${MASTER_KEY_RETIRED_ENV} and DIR/master.key.retired-* are read at start).
     Keys in ${MASTER_KEY_ENV} (replicas): this command does not edit your environment. Instead,
     on every replica, first add the new key to ${MASTER_KEY_RETIRED_ENV} and restart; then set
     ${MASTER_KEY_ENV}=<new key> and ${MASTER_KEY_RETIRED_ENV}=<old key> and restart again (rolling,
     so no replica ever meets a record under a key it lacks). Generate a key with
       node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"

  2. Re-seal every stored credential revision under the current key:
       awaken secrets reseal --data-dir DIR            (SQLite)
       awaken secrets reseal --database-url URL        (PostgreSQL; keys from the environment or DIR)
     Reads keys exactly as awaken up does. Each revision is re-sealed in its own transaction (the
     identity stays bound to its row); it can run while servers serve, can be interrupted (Ctrl-C)
     and run again (it goes on where it stopped; running it twice changes nothing), and refuses to
     start while any revision names a key it does not hold. It prints progress and the counts.

  3. Drop the retired key (delete DIR/master.key.retired-<id>, or remove it from
     ${MASTER_KEY_RETIRED_ENV}) once reseal reports 0 revisions remaining, every server runs with the
     new key as its master key, and you no longer need to restore a database backup taken before
     the reseal (its revisions are sealed under the old key: keep the old key with such backups).
`;

/** `awaken secrets …`: master-key rotation. */
export function secretsCommand(): Command {
  const command = new Command("secrets")
    .description(
      "Master-key rotation: make a new master key current, then re-seal every credential under it.",
    )
    .addHelpText("after", ROTATION_HELP);

  command.addCommand(
    new Command("rotate-master-key")
      .description(
        "Step 1 of a rotation: keep <data-dir>/master.key as a retired key and make a new key current (then run `awaken secrets reseal`).",
      )
      .addOption(new Option("--data-dir <dir>", "the data directory holding master.key").default(".awaken"))
      .addOption(
        new Option(
          "--new-key-file <file>",
          "use this key (base64 of 32 bytes, mode 0600) instead of generating one",
        ),
      )
      .addHelpText("after", ROTATION_HELP)
      .action((opts: { dataDir: string; newKeyFile?: string }) => {
        if (process.env[MASTER_KEY_ENV]) {
          throw new Error(
            `${MASTER_KEY_ENV} is set, so the master key does not come from a file and this command cannot rotate it. ` +
              `Rotate by environment instead (see awaken secrets rotate-master-key --help): ${MASTER_KEY_RETIRED_ENV}=<old key>, ${MASTER_KEY_ENV}=<new key>, then awaken secrets reseal.`,
          );
        }
        const dataDir = resolve(opts.dataDir);
        const newKey: MasterKey = opts.newKeyFile
          ? readMasterKeyFile(resolve(opts.newKeyFile))
          : generateMasterKey();
        try {
          const rotated = rotateMasterKeyFile(dataDir, newKey);
          process.stdout.write(
            [
              `master key rotated in ${dataDir}:`,
              `  current  ${rotated.currentId}  ${rotated.file}${opts.newKeyFile ? ` (from ${opts.newKeyFile})` : " (generated)"}`,
              `  retired  ${rotated.previousId}  ${rotated.retiredFile}`,
              "Next: restart the server (it seals under the new key and opens both), then run",
              `  awaken secrets reseal --data-dir ${opts.dataDir}   (add --database-url for PostgreSQL)`,
              "Back up the new key now, with the database.",
            ].join("\n") + "\n",
          );
        } finally {
          newKey.key.fill(0);
        }
      }),
  );

  command.addCommand(
    new Command("reseal")
      .description(
        "Step 2 of a rotation: re-seal every credential revision not under the current master key (resumable, idempotent).",
      )
      .addOption(
        new Option(
          "--data-dir <dir>",
          "master.key (unless AWAKEN_MASTER_KEY) and awaken.db (unless --database-url)",
        ).default(".awaken"),
      )
      .addOption(
        new Option("--database-url <url>", "re-seal this PostgreSQL database (postgres://…) instead").env(
          "AWAKEN_DATABASE_URL",
        ),
      )
      .addOption(
        new Option("--batch-size <n>", "revisions read per query (each is re-sealed in its own transaction)")
          .default(100)
          .argParser(integer("--batch-size", 1)),
      )
      .addOption(
        new Option(
          "--limit <n>",
          "re-seal at most this many revisions, then stop (run again to go on)",
        ).argParser(integer("--limit", 1)),
      )
      .addHelpText("after", `${ROTATION_HELP}${STORAGE_HELP}`)
      .action(async (opts: { dataDir: string; databaseUrl?: string; batchSize: number; limit?: number }) => {
        const controller = new AbortController();
        let interrupted = false;
        const onSignal = () => {
          if (interrupted) process.exit(130);
          interrupted = true;
          process.stderr.write("stopping after the current revision (Ctrl-C again to quit at once)\n");
          controller.abort();
        };
        process.on("SIGINT", onSignal);
        process.on("SIGTERM", onSignal);
        try {
          const report = await resealDatabase({
            dataDir: opts.dataDir,
            databaseUrl: opts.databaseUrl,
            env: process.env,
            batchSize: opts.batchSize,
            limit: opts.limit,
            signal: controller.signal,
            print: (line) => process.stdout.write(`${line}\n`),
          });
          if (interrupted && report.remaining > 0) process.exitCode = 130;
        } finally {
          process.off("SIGINT", onSignal);
          process.off("SIGTERM", onSignal);
        }
      }),
  );
  return command;
}

export interface ResealDatabaseOptions {
  dataDir: string;
  databaseUrl?: string | undefined;
  env: NodeJS.ProcessEnv;
  batchSize?: number | undefined;
  limit?: number | undefined;
  signal?: AbortSignal | undefined;
  print: (line: string) => void;
}

/**
 * `awaken secrets reseal` without the command line: keys as `awaken up` reads them (never
 * generated here), the database `awaken up` would use, progress and the outcome printed.
 */
export async function resealDatabase(options: ResealDatabaseOptions): Promise<ResealReport> {
  const dataDir = resolve(options.dataDir);
  const { masterKey, source, file } = loadMasterKey({ env: options.env, dataDir, generate: false });
  const retired = loadRetiredMasterKeys({ env: options.env, dataDir, currentId: masterKey.id });
  const keys = new LocalSecretStore(
    masterKey,
    retired.map((r) => r.masterKey),
  );
  const print = options.print;
  try {
    print(`current master key ${masterKey.id} (${source === "env" ? MASTER_KEY_ENV : file})`);
    for (const r of retired) print(`retired master key ${r.masterKey.id} (${r.source})`);
    const { store, facts, target, close } = await openCredentialStore(dataDir, options.databaseUrl);
    try {
      print(`re-sealing credential revisions in ${target}`);
      const report = await resealCredentialRevisions(store, keys, {
        batchSize: options.batchSize,
        limit: options.limit,
        signal: options.signal,
        onProgress: (p) =>
          print(
            `  re-sealed ${p.resealed} of ${p.total}${p.skipped ? ` (${p.skipped} changed meanwhile, skipped)` : ""}`,
          ),
      });
      print(
        `done: ${report.resealed} re-sealed, ${report.skipped} skipped (changed or deleted meanwhile), ` +
          `${report.remaining} not under ${report.currentKeyId}`,
      );
      for (const [id, n] of report.after)
        print(`  ${id}: ${n} revision(s)${id === report.currentKeyId ? " (current)" : ""}`);
      if (report.remaining === 0) {
        // Servers started from now on need only the current key (they compare with this record).
        const recorded = await facts.get("master_key_id");
        if (recorded !== null && recorded !== masterKey.id && keys.holdsKey(recorded)) {
          await facts.replace("master_key_id", recorded, masterKey.id, Date.now());
        }
        const ids = retired.map((r) => r.masterKey.id);
        print(
          ids.length > 0
            ? `Every revision is sealed under ${report.currentKeyId}. The retired key(s) ${ids.join(", ")} can be ` +
                `dropped once every server runs with ${report.currentKeyId} as its master key and no database ` +
                "backup taken before now will be restored (keep the old key with such backups)."
            : `Every revision is sealed under ${report.currentKeyId}; no retired key is in use.`,
        );
      } else if (report.stoppedEarly) {
        print(
          `Stopped early: ${report.remaining} revision(s) still under retired keys. Run it again to go on.`,
        );
      } else {
        print(
          `${report.remaining} revision(s) are still under other keys (written meanwhile by a server that still ` +
            `seals under an old key?). Restart every server with ${report.currentKeyId} as its master key, then ` +
            "run it again. Keep the retired keys until it reports 0.",
        );
      }
      return report;
    } finally {
      await close();
    }
  } finally {
    masterKey.key.fill(0);
    for (const r of retired) r.masterKey.key.fill(0);
  }
}

async function openCredentialStore(
  dataDir: string,
  databaseUrl: string | undefined,
): Promise<{
  store: SqlCredentialStore;
  facts: SqlInstallationFacts;
  target: string;
  close: () => Promise<void>;
}> {
  if (databaseUrl) {
    const handle = await openPostgres(databaseUrl, { maxConnections: 2 });
    return {
      store: new SqlCredentialStore(handle.db),
      facts: new SqlInstallationFacts(handle.db),
      target: `PostgreSQL ${redact(databaseUrl)} (schema ${handle.schema})`,
      close: () => handle.close(),
    };
  }
  const file = sqliteFile(dataDir);
  // Re-sealing a database that does not exist would create an empty one: say so instead.
  if (!existsSync(file)) throw new Error(`${file} does not exist (pass --database-url for PostgreSQL)`);
  const handle = await openSqlite(file);
  return {
    store: new SqlCredentialStore(handle.db),
    facts: new SqlInstallationFacts(handle.db),
    target: `SQLite ${file}`,
    close: () => handle.close(),
  };
}
