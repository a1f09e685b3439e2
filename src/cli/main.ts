import { Command } from "commander";
import { environmentKeysCommand } from "./environmentKeysCommand.js";
import { migrateCommand } from "./migrateCommand.js";
import { secretsCommand } from "./secretsCommand.js";
import { upCommand } from "./upCommand.js";
import { workerCommand } from "./workerCommand.js";

const program = new Command()
  .name("awaken")
  .description("Awaken Agents: a self-hostable agent execution platform speaking the Managed Agents wire.")
  .showHelpAfterError()
  .addCommand(upCommand())
  .addCommand(migrateCommand())
  .addCommand(workerCommand())
  .addCommand(environmentKeysCommand())
  .addCommand(secretsCommand());

program.parseAsync(process.argv).catch((error) => {
  console.error(`awaken: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
