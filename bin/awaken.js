#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the prepare script) or `npm run build`.
import("../dist/cli/main.js").catch((error) => {
  if (error && error.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/cli/main.js")) {
    console.error("awaken: the CLI is not built yet. Run `npm run build` (npm ci does it for you).");
    process.exit(1);
  }
  throw error;
});
