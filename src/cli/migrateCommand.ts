import { Command, Option } from "commander";
import { migrateDatabase } from "./migrate.js";

export const STORAGE_HELP = `
Storage:
  default               an embedded SQLite file, <data-dir>/awaken.db (one process)
  --database-url URL    PostgreSQL instead, e.g. postgres://user:pass@host:5432/awaken; add
                        ?options=-c%20search_path%3Dmyschema to use a schema other than public
                        (it must exist). --data-dir still holds the API key file.
  Opening a database migrates it to the latest schema (awaken up does, awaken migrate does only
  that); on PostgreSQL under an advisory lock, so replicas starting together migrate it once.
`;

/** `awaken migrate`: bring the database to the latest schema, nothing else. */
export function migrateCommand(): Command {
  return new Command("migrate")
    .description(
      "Bring the database to the latest schema and print what was applied (awaken up also does this on start).",
    )
    .addOption(
      new Option("--data-dir <dir>", "migrate <dir>/awaken.db (without --database-url)").default(".awaken"),
    )
    .addOption(
      new Option("--database-url <url>", "migrate this PostgreSQL database (postgres://…) instead").env(
        "AWAKEN_DATABASE_URL",
      ),
    )
    .addHelpText("after", STORAGE_HELP)
    .action(async (opts) => {
      const report = await migrateDatabase({ dataDir: opts.dataDir, databaseUrl: opts.databaseUrl });
      const lines =
        report.applied.length === 0
          ? [`${report.target}: already up to date, nothing applied`]
          : [
              `${report.target}: applied ${report.applied.length} migration(s)`,
              ...report.applied.map((n) => `  ${n}`),
            ];
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
