import { readFileSync } from "node:fs";
import { Command } from "commander";
import { acpCommand } from "./acpCommand.js";
import { apiKeysCommand } from "./apiKeysCommand.js";
import { auditCommand } from "./auditCommand.js";
import { buildWorkerCommand } from "./buildWorkerCommand.js";
import { environmentKeysCommand } from "./environmentKeysCommand.js";
import { migrateCommand } from "./migrateCommand.js";
import { secretsCommand } from "./secretsCommand.js";
import { controlCommand, coordinatorCommand } from "./splitCommands.js";
import { tunnelCommand } from "./tunnelCommand.js";
import { upCommand } from "./upCommand.js";
import { workerCommand } from "./workerCommand.js";

// The package's own manifest: dist/cli/main.js and src/cli/main.ts both sit two levels below it.
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const program = new Command()
  .name("awaken")
  .version(version, "-V, --version", "print the version and exit")
  .description("Awaken Agents: a self-hostable agent execution platform speaking the Managed Agents wire.")
  .showHelpAfterError()
  .addCommand(upCommand())
  .addCommand(migrateCommand())
  .addCommand(controlCommand())
  .addCommand(coordinatorCommand())
  .addCommand(workerCommand())
  .addCommand(buildWorkerCommand())
  .addCommand(environmentKeysCommand())
  .addCommand(apiKeysCommand())
  .addCommand(auditCommand())
  .addCommand(secretsCommand())
  .addCommand(tunnelCommand())
  .addCommand(acpCommand(version));

program.parseAsync(process.argv).catch((error) => {
  console.error(`awaken: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
