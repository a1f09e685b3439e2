/**
 * `awaken worker` (the same command, flags and shutdown as `dist/cli/main.js worker`) with the
 * test-only egress hooks no flag or variable of the product can set: its bwrap sandboxes' egress
 * proxies resolve `*.test` to the loopback, may connect to 127.0.0.1 only, and trust the CA named
 * by AWAKEN_TEST_UPSTREAM_CA_FILE, so a sandbox can reach a local HTTPS upstream with no internet
 * (as `sandboxEgress` does for the in-process server in test/e2e/secretEgress.test.ts).
 */
import { readFileSync } from "node:fs";
import { workerCommand } from "../../dist/cli/workerCommand.js";

const caFile = process.env.AWAKEN_TEST_UPSTREAM_CA_FILE;
const command = workerCommand({
  sandboxEgress: {
    resolve: async (host) => (host.endsWith(".test") ? [{ address: "127.0.0.1", family: 4 }] : []),
    allowAddress: (address) => address === "127.0.0.1",
    upstreamCa: caFile ? [readFileSync(caFile, "utf8")] : [],
  },
});
command.parseAsync(process.argv).catch((error) => {
  console.error(`awaken: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
