// Releases what the bench creates (child processes, temp dirs, PostgreSQL schemas) on every path:
// `close()` in a finally block on success or error, and the signal handler below on Ctrl-C, which
// try/finally alone does not cover (the process would exit with servers still running).

const open = new Set();

export class Scope {
  #undo = [];

  constructor() {
    open.add(this);
  }

  /** Registers a release step; steps run in reverse order (a server stops before its dir goes). */
  defer(fn) {
    this.#undo.push(fn);
  }

  /** Runs every step even when one fails, then rethrows the first failure. */
  async close() {
    open.delete(this);
    let failure = null;
    while (this.#undo.length > 0) {
      const step = this.#undo.pop();
      try {
        await step();
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure) throw failure;
  }
}

/** Runs `fn(scope)` and always closes the scope afterwards. */
export async function withScope(fn) {
  const scope = new Scope();
  try {
    return await fn(scope);
  } finally {
    await scope.close();
  }
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping servers and dropping schemas…\n`);
    Promise.allSettled([...open].map((scope) => scope.close())).finally(() => process.exit(130));
  });
}
