// Command-line options of the bench scripts: node's parseArgs, plus `--help` (prints the script's
// own header comment, which is its usage) and a one-line error for an unknown or malformed option
// instead of a stack trace.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** The parsed option values of the script at `scriptUrl` (pass `import.meta.url`). */
export function benchArgs(scriptUrl, options) {
  const script = fileURLToPath(scriptUrl);
  let parsed;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: "boolean", short: "h" } } });
  } catch (error) {
    process.stderr.write(`${basename(script)}: ${error.message}\nRun it with --help for its options.\n`);
    process.exit(2);
  }
  if (parsed.values.help) {
    process.stdout.write(headerComment(script));
    process.exit(0);
  }
  return parsed.values;
}

/** The comment lines a script starts with (after any shebang), without their `//`. */
function headerComment(script) {
  const lines = readFileSync(script, "utf8").split("\n");
  if (lines[0]?.startsWith("#!")) lines.shift();
  const header = [];
  for (const line of lines) {
    if (!line.startsWith("//")) break;
    header.push(line.replace(/^\/\/ ?/, ""));
  }
  return `${header.join("\n")}\n`;
}
