import pg from "pg";
import type { StatementCounter } from "./statementCounter.js";
import { statementName } from "./statementNames.js";

type QueryArgs = Parameters<pg.Client["query"]>;

/**
 * The pool's connection class: every data statement goes out as a named prepared statement
 * (`statementName`), so Kysely's statements are parsed and planned once per connection like the
 * pipelined ones, instead of on every call. With a `counter` (the benchmark's), it also counts
 * statements and round trips; without one it adds nothing but the name lookup.
 */
export function preparingClient(counter?: StatementCounter): typeof pg.Client {
  return class PreparingClient extends pg.Client {
    private outstanding = 0;

    override query(...args: unknown[]): never {
      const [first, second, ...rest] = args;
      let forwarded = args;
      let text: string | undefined;
      let named = false;
      if (typeof first === "string") {
        text = first;
        const name = statementName(first);
        if (name !== undefined && (second === undefined || Array.isArray(second))) {
          forwarded = [{ name, text: first, values: second ?? [] }, ...rest];
          named = true;
        }
      } else if (
        first &&
        typeof first === "object" &&
        typeof (first as { text?: unknown }).text === "string"
      ) {
        const config = first as pg.QueryConfig;
        text = config.text;
        if (config.name) named = true;
        else {
          const name = statementName(config.text);
          if (name !== undefined) {
            forwarded = [{ ...config, name }, second, ...rest].slice(0, args.length);
            named = true;
          }
        }
      }
      const result = super.query(...(forwarded as QueryArgs)) as unknown;
      if (counter && text !== undefined) {
        counter.record(text, named, this.outstanding === 0);
        if (result && typeof (result as Promise<unknown>).then === "function") {
          this.outstanding += 1;
          const settle = () => {
            this.outstanding -= 1;
          };
          (result as Promise<unknown>).then(settle, settle);
        }
      }
      return result as never;
    }
  };
}
