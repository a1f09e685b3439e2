/**
 * Each process's help says what that process holds: only the all-in-one server keeps an API key
 * and a master key in its data dir, so only its help says an unsandboxed tool could read them;
 * Control's help names its own door.
 */
import { describe, expect, it } from "vitest";
import { controlCommand, coordinatorCommand } from "../../src/cli/splitCommands.js";
import { upCommand } from "../../src/cli/upCommand.js";
import { workerCommand } from "../../src/cli/workerCommand.js";

const help = (command: { helpInformation(): string; configureHelp(c: object): unknown }) => {
  // Wide enough that no phrase is split across lines.
  command.configureHelp({ helpWidth: 400 });
  return command.helpInformation();
};

describe("help texts", () => {
  it("only awaken up says its data dir holds the API key and the master key", () => {
    expect(help(upCommand())).toContain("the API key, the master key");
    expect(help(upCommand())).toContain("they can read the data dir and the master key");
    for (const command of [coordinatorCommand(), workerCommand()]) {
      expect(help(command)).not.toMatch(
        /where the API key|read the data dir and master key|and the master key\)/,
      );
    }
    expect(help(coordinatorCommand())).toContain("where the coordinator's files");
    expect(help(workerCommand())).toContain("this worker's files, its worker token");
  });

  it("Control's help names its own door and how to turn it off", () => {
    const text = help(controlCommand());
    expect(text).toContain("--api-port <port>");
    expect(text).toContain("--no-api");
    expect(text).toContain("Control's own door");
  });
});
