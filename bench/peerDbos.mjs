// The DBOS peer (`@dbos-inc/dbos-sdk`, in process, on the same PostgreSQL): the peer workload as
// one workflow of durable steps, each checkpointed before the next runs — record the user message,
// a scripted model step (returns a tool call), the tool step, a scripted model step (returns the
// final text), done. `measureDbosPeer` runs it in a child process of its own (DBOS is a
// process-wide singleton) on a fresh schema, dropped afterwards; other benches may import it for
// the DBOS CPU per run.
import { benchArgs } from "./args.mjs";
import { inChild, timeRuns } from "./peerRuns.mjs";
import { freshSchema } from "./postgres.mjs";
import { withScope } from "./scope.mjs";

/** runs/s and DBOS process CPU ms per run, at `concurrency` workflows in flight. */
export function measureDbosPeer({ databaseUrl, concurrency, runs }) {
  return withScope(async (scope) => {
    // DBOS takes the schema by name (system tables in it) on the plain database URL.
    const { schema } = await freshSchema(scope, databaseUrl, "awaken_bench_dbos");
    return inChild(import.meta.url, { url: databaseUrl, schema, concurrency, runs });
  });
}

async function child({ url, schema, concurrency, runs }) {
  const { DBOS } = await import("@dbos-inc/dbos-sdk");
  DBOS.setConfig({
    name: "awaken-bench-peer",
    systemDatabaseUrl: url,
    systemDatabaseSchemaName: schema,
    systemDatabasePoolSize: Math.max(4, concurrency + 2),
    logLevel: "error",
  });
  const peerRun = DBOS.registerWorkflow(
    async (text) => {
      const message = await DBOS.runStep(async () => ({ role: "user", text }), { name: "user_message" });
      const call = await DBOS.runStep(
        async () => ({ type: "tool_use", name: "lookup", input: { q: message.text } }),
        { name: "model_1" },
      );
      const result = await DBOS.runStep(
        async () => ({ type: "tool_result", content: `42 for ${call.input.q}` }),
        {
          name: "tool",
        },
      );
      const answer = await DBOS.runStep(
        async () => ({ type: "text", text: `[scripted] ${result.content}` }),
        {
          name: "model_2",
        },
      );
      return DBOS.runStep(async () => ({ done: true, answer: answer.text }), { name: "done" });
    },
    { name: "peerRun" },
  );
  await DBOS.launch();
  try {
    return await timeRuns({ concurrency, runs, runOne: (i) => peerRun(`run ${i}`), walUrl: url });
  } finally {
    await DBOS.shutdown();
  }
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain && process.argv.includes("--child")) {
  const args = benchArgs(import.meta.url, {
    child: { type: "boolean" },
    url: { type: "string" },
    schema: { type: "string" },
    concurrency: { type: "string" },
    runs: { type: "string" },
  });
  const figures = await child({ ...args, concurrency: Number(args.concurrency), runs: Number(args.runs) });
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
