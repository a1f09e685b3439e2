import { invalid } from "../../kernel/errors.js";
import type { Outbound } from "../../kernel/outboundConnector.js";
import { mountSegment } from "./mountPaths.js";

export const REPOSITORY_URL_MAX = 2048;
export const REPOSITORY_TOKEN_MAX = 4096;
const BRANCH_MAX = 255;

/**
 * A repository URL the server may clone for a user: http(s), no credentials in it (a token goes in
 * `authorization_token`, sealed), and a host the outbound address policy admits (loopback, private
 * and metadata addresses only when the operator allow-listed them). Returns the repository's name.
 */
export async function checkRepositoryUrl(raw: string, outbound: Outbound, field: string): Promise<string> {
  if (raw.length > REPOSITORY_URL_MAX)
    throw invalid(`${field}: a repository URL is at most ${REPOSITORY_URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`${field}: not a URL; expected https://host/owner/repository`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw invalid(
      `${field}: only http(s) repository URLs are cloned (got ${url.protocol.replace(/:$/, "")})`,
    );
  // Never echo credentials: say that they are there, not what they are.
  if (url.username !== "" || url.password !== "")
    throw invalid(`${field}: the URL carries credentials; pass the token as authorization_token instead`);
  if (url.search !== "" || url.hash !== "")
    throw invalid(`${field}: a repository URL has no query or fragment`);
  const refusal = await outbound.admit(url);
  if (refusal) throw invalid(`${field}: ${refusal.message}`);
  const last =
    url.pathname
      .split("/")
      .filter((s) => s !== "")
      .pop() ?? "";
  const name = mountSegment(decodeSegment(last).replace(/\.git$/, ""), "");
  if (name === "")
    throw invalid(`${field}: the URL names no repository (expected https://host/owner/repository)`);
  return name;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A token goes into a clone's HTTP header: no control characters (no header injection), bounded. */
export function checkToken(token: string, field: string): void {
  if (token.length === 0) throw invalid(`${field}: the token is empty`);
  if (token.length > REPOSITORY_TOKEN_MAX)
    throw invalid(`${field}: a token is at most ${REPOSITORY_TOKEN_MAX} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(token)) throw invalid(`${field}: the token contains a control character`);
}

/**
 * A checkout becomes a git argument: a branch never starts with `-` (no option injection) and
 * follows git's ref-name rules; a commit is a hex SHA.
 */
export function checkCheckout(
  checkout: { type: "branch"; name: string } | { type: "commit"; sha: string },
  field: string,
): void {
  if (checkout.type === "commit") {
    if (!/^[0-9a-f]{7,64}$/i.test(checkout.sha))
      throw invalid(`${field}.sha: expected a commit SHA (7 to 64 hexadecimal characters)`);
    return;
  }
  const name = checkout.name;
  const bad =
    name.length > BRANCH_MAX ||
    name.startsWith("-") ||
    name.startsWith("/") ||
    name.endsWith("/") ||
    name.endsWith(".") ||
    name.endsWith(".lock") ||
    name.includes("..") ||
    name.includes("//") ||
    name.includes("@{") ||
    name === "@" ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    /[\u0000-\u0020\u007f~^:?*[\\]/.test(name);
  if (bad) throw invalid(`${field}.name: ${JSON.stringify(name.slice(0, 100))} is not a valid branch name`);
}
