import { readFileSync } from "node:fs";
import { Command } from "commander";
import { acpCommand } from "./acpCommand.js";

// `awaken acp` alone, as bin/awaken.js starts it: an editor waits for it on every launch, so it loads
// its own modules only, not every server command's (a quarter of main.js's start-up time).
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

new Command()
  .name("awaken")
  .version(version, "-V, --version", "print the version and exit")
  .showHelpAfterError()
  .addCommand(acpCommand(version))
  .parseAsync(process.argv)
  .catch((error) => {
    console.error(`awaken: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
