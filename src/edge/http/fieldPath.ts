/** How a field path is written: bodies use dots, query strings brackets. */
export type PathStyle = "body" | "query";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `events[0].content[1].text` for bodies; `created_at[gte]`, `types[0]` for query strings. */
export function formatPath(path: readonly PropertyKey[], style: PathStyle = "body"): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else {
      const key = String(segment);
      if (out === "") out = key;
      else if (style === "query") out += `[${key}]`;
      else out += IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}
