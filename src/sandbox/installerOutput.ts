/**
 * What of an installer's output may reach a client: its last lines, cut short, with the host's
 * paths replaced by placeholders and terminal control sequences removed.
 */

/** The most kept of an installer's stderr in an error (the tail: where npm and pip say why). */
export const INSTALLER_OUTPUT_CHARS = 1_500;

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are what it removes.
const ANSI_ESCAPE = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/**
 * `hidden` maps host paths to their placeholders (`/srv/awaken/workspaces` → `<workspaces>`);
 * longer paths are replaced first, so a path inside another keeps its own placeholder.
 */
export function scrubInstallerOutput(
  text: string,
  hidden: ReadonlyArray<readonly [path: string, placeholder: string]>,
  maxChars = INSTALLER_OUTPUT_CHARS,
): string {
  let out = text.replace(ANSI_ESCAPE, "").replace(CONTROL, "");
  const byLength = hidden.filter(([path]) => path.length > 1).sort((a, b) => b[0].length - a[0].length);
  for (const [path, placeholder] of byLength) out = out.replaceAll(path, placeholder);
  out = out.trim();
  if (out.length <= maxChars) return out;
  const tail = out.slice(-maxChars);
  // Start at a line boundary when one is near, so no half path or half word leads.
  const newline = tail.indexOf("\n");
  return `… ${newline >= 0 && newline < maxChars / 2 ? tail.slice(newline + 1) : tail}`;
}
