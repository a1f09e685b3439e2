/**
 * Where the Console and the API live, from the document's own URL: the server gives index.html a
 * relative `<base>` naming the Console's root, and the API is its parent. So a reverse proxy may
 * mount both under any path prefix.
 */
export function consoleRoot(): URL {
  return new URL(".", document.baseURI);
}

export function apiBase(): string {
  return new URL("..", consoleRoot()).href.replace(/\/$/, "");
}
