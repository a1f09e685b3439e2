#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the prepare script) or `npm run build`.
// `awaken acp` (started by editors) has an entry of its own that loads none of the server's modules.
const entry = process.argv[2] === "acp" ? "../dist/cli/acpMain.js" : "../dist/cli/main.js";
import(entry).catch((error) => {
  if (error && error.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes(entry.slice(3))) {
    console.error("awaken: the CLI is not built yet. Run `npm run build` (npm ci does it for you).");
    process.exit(1);
  }
  throw error;
});
