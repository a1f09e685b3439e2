import { fileTypeFromBuffer } from "file-type";

/**
 * Extensions whose content `file-type` cannot recognise from bytes (text formats), mapped to their
 * type. Only these are trusted from a name; anything else falls through to the declared type.
 */
const TEXT_EXTENSIONS: Readonly<Record<string, string>> = {
  txt: "text/plain",
  log: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  json: "application/json",
  jsonl: "application/jsonl",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  xml: "application/xml",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/x-typescript",
  py: "text/x-python",
  rb: "text/x-ruby",
  go: "text/x-go",
  rs: "text/x-rust",
  java: "text/x-java",
  c: "text/x-c",
  h: "text/x-c",
  cpp: "text/x-c++",
  sh: "application/x-sh",
  sql: "application/sql",
  svg: "image/svg+xml",
};

const TOKEN = "[A-Za-z0-9!#$&^_.+-]{1,64}";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}$`);
export const OCTET_STREAM = "application/octet-stream";

/**
 * A file's MIME type: what its bytes are (sniffed), else what its extension says (text formats
 * only), else the client's declared type when it is a syntactically valid `type/subtype`, else
 * `application/octet-stream`. With it, the extension that type goes by (for `unnamed.<ext>`).
 */
export async function mimeTypeOf(
  bytes: Uint8Array,
  filename: string,
  declared: string | undefined,
): Promise<{ mimeType: string; extension: string | null }> {
  const sniffed = await fileTypeFromBuffer(bytes);
  if (sniffed) return { mimeType: sniffed.mime, extension: sniffed.ext };
  const dot = filename.lastIndexOf(".");
  const ext = dot > 0 ? filename.slice(dot + 1).toLowerCase() : "";
  const byName = Object.hasOwn(TEXT_EXTENSIONS, ext) ? TEXT_EXTENSIONS[ext] : undefined;
  if (byName !== undefined) return { mimeType: byName, extension: ext };
  const media = declared?.split(";")[0]?.trim().toLowerCase();
  const mimeType = media && MEDIA_TYPE.test(media) ? media : OCTET_STREAM;
  return { mimeType, extension: extensionFor(mimeType) };
}

/** The extension the table gives a type, if any. */
function extensionFor(mimeType: string): string | null {
  for (const [ext, type] of Object.entries(TEXT_EXTENSIONS)) if (type === mimeType) return ext;
  return null;
}
