import fastifyMultipart from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AwakenError } from "../../kernel/errors.js";
import { NUL_MESSAGE, quotedName } from "../http/clientStrings.js";

/**
 * Multipart uploads for the Managed Agents wire (files, skill bundles). The body is streamed by
 * busboy, not buffered by Fastify, so the server's JSON `bodyLimit` does not bound it: each route
 * names its own per-file byte limit and the caps below bound everything else a form can carry.
 */
export const MULTIPART_LIMITS = {
  /** File parts in one request (a skill bundle's files). */
  files: 1000,
  /** Text fields in one request. */
  fields: 16,
  parts: 1016,
  fieldNameSize: 200,
  /** Bytes of one text field's value. */
  fieldSize: 64 * 1024,
  /** Header lines of one part. */
  headerPairs: 16,
} as const;

/** Bytes of a filename as sent (one path segment of it). */
export const MAX_FILENAME_BYTES = 255;
/** Bytes of a relative path as sent (`dir/sub/SKILL.md`). */
export const MAX_UPLOAD_PATH_BYTES = 1024;

const MULTIPART = "multipart/form-data";

/** Registers the multipart parser in the managed edge's scope; the JSON parser stays as it is. */
export function registerMultipartUploads(app: FastifyInstance): void {
  app.register(fastifyMultipart, {
    // The client's filename arrives as sent: it is checked here, never silently cut to a basename.
    preservePath: true,
    throwFileSizeLimit: true,
    limits: { ...MULTIPART_LIMITS },
  });
}

/**
 * An upload route's `preParsing` hook: any body other than multipart/form-data is a 400 naming the
 * content type the route takes, before a parser answers for JSON (or refuses text as "send JSON").
 */
export async function requireMultipart(request: FastifyRequest): Promise<void> {
  const type = String(request.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  if (type !== MULTIPART) throw notMultipart(request);
}

export interface UploadSpec {
  /** File fields accepted, each once or (`many`) repeated (`files[]`). */
  fileFields: Readonly<Record<string, { many: boolean }>>;
  /** Text fields accepted, each at most once. */
  textFields: readonly string[];
  /** Bytes of one file; a larger part is a 413 naming the limit. */
  maxFileBytes: number;
  /** Bytes of all files together (a bundle); absent: only the per-file limit. */
  maxTotalBytes?: number;
  /** A bundle's files may be empty (a Python package's `__init__.py`); absent: an empty file is refused. */
  allowEmptyFiles?: boolean;
}

export interface UploadedFile {
  field: string;
  /** The filename as the client sent it (checked by `checkUploadFilename`). */
  filename: string;
  /** The content type the client declared for the part (untrusted). */
  declaredType: string;
  bytes: Buffer;
}

export interface UploadedForm {
  files: UploadedFile[];
  fields: Map<string, string>;
}

/**
 * Reads a multipart request's parts into memory under `spec`. Every refusal is a 4xx naming the
 * part: not multipart, an unknown or repeated field, a file over the limit (413), an empty file,
 * a filename that is not a safe relative name.
 */
export async function readMultipartUpload(request: FastifyRequest, spec: UploadSpec): Promise<UploadedForm> {
  if (!request.isMultipart()) throw notMultipart(request);
  const files: UploadedFile[] = [];
  const fields = new Map<string, string>();
  let totalBytes = 0;
  try {
    for await (const part of request.parts({ limits: { fileSize: spec.maxFileBytes } })) {
      if (part.type === "field") {
        if (!spec.textFields.includes(part.fieldname)) throw unknownField(part.fieldname, spec);
        if (fields.has(part.fieldname)) throw invalidPart(part.fieldname, "is sent more than once");
        if (part.valueTruncated) throw invalidPart(part.fieldname, "is too long");
        const value = String(part.value);
        if (value.includes("\0")) throw invalidPart(part.fieldname, NUL_MESSAGE);
        fields.set(part.fieldname, value);
        continue;
      }
      const rule = spec.fileFields[part.fieldname];
      if (!Object.hasOwn(spec.fileFields, part.fieldname) || rule === undefined) {
        part.file.resume();
        throw unknownField(part.fieldname, spec);
      }
      if (!rule.many && files.some((f) => f.field === part.fieldname)) {
        part.file.resume();
        throw invalidPart(part.fieldname, "is sent more than once; send one file");
      }
      // A part without a filename (typed as a string, absent at run time) is named "" here.
      const filename: string = typeof part.filename === "string" ? part.filename : "";
      checkUploadFilename(filename, part.fieldname);
      const bytes = await part.toBuffer();
      if (bytes.length === 0 && spec.allowEmptyFiles !== true) {
        throw invalidPart(part.fieldname, `file ${shown(filename)} is empty; send at least one byte`);
      }
      totalBytes += bytes.length;
      if (spec.maxTotalBytes !== undefined && totalBytes > spec.maxTotalBytes) {
        throw new AwakenError(
          "payload_too_large",
          `The uploaded files together exceed the maximum of ${spec.maxTotalBytes} bytes.`,
        );
      }
      files.push({ field: part.fieldname, filename, declaredType: part.mimetype, bytes });
    }
  } catch (error) {
    throw uploadError(error, spec);
  }
  return { files, fields };
}

/**
 * A filename as sent must be a safe relative name: no NUL or control character, not absolute, no
 * `..` segment, each segment at most 255 bytes and the whole at most 1024. An empty one is allowed
 * (the route names it). Throws a 400 naming the problem.
 */
export function checkUploadFilename(filename: string, field = "file"): void {
  const problem = filenameProblem(filename);
  if (problem) throw invalidPart(field, `filename ${shown(filename)} ${problem}`);
}

/**
 * A relative path inside an upload (a skill bundle's `dir/SKILL.md`): the filename rules, plus no
 * empty or `.` segment and `/` as the only separator. Returns the path; throws a 400 naming it.
 */
export function checkRelativeUploadPath(path: string, field = "files[]"): string {
  const problem =
    filenameProblem(path) ??
    (path === ""
      ? "is empty; name the file's path"
      : path.split("/").some((s) => s === "" || s === ".")
        ? "has an empty or '.' segment; write the path as dir/name"
        : null);
  if (problem) throw invalidPart(field, `path ${shown(path)} ${problem}`);
  return path;
}

/** A filename's final path component (what the Files API keeps of `dir/name.txt`). */
export function finalPathComponent(filename: string): string {
  return filename.slice(filename.lastIndexOf("/") + 1);
}

function filenameProblem(name: string): string | null {
  if (name.includes("\0")) return NUL_MESSAGE;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0001-\u001f\u007f]/.test(name)) return "contains a control character; remove it";
  if (name.includes("\\")) return "contains a backslash; use '/' to separate directories";
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "is an absolute path; send a relative name";
  const segments = name.split("/");
  if (segments.includes("..")) return "has a '..' segment, which would climb out of its directory";
  if (Buffer.byteLength(name, "utf8") > MAX_UPLOAD_PATH_BYTES) {
    return `is longer than ${MAX_UPLOAD_PATH_BYTES} bytes`;
  }
  if (segments.some((s) => Buffer.byteLength(s, "utf8") > MAX_FILENAME_BYTES)) {
    return `is longer than ${MAX_FILENAME_BYTES} bytes (in one path segment)`;
  }
  return null;
}

/** A client's name in a message, cut so a 1 MB name does not become a 1 MB message. */
function shown(name: string): string {
  const cut = name.length > 80 ? `${name.slice(0, 80)}…` : name;
  return JSON.stringify(cut.replaceAll("\0", "\\u0000"));
}

function notMultipart(request: FastifyRequest): AwakenError {
  const sent = request.headers["content-type"];
  return new AwakenError(
    "invalid_request",
    `Send this request as ${MULTIPART} (the content-type sent was ${sent === undefined ? "none" : JSON.stringify(String(sent).slice(0, 100))}).`,
  );
}

function invalidPart(field: string, message: string): AwakenError {
  const path = quotedName(field);
  return new AwakenError("invalid_request", `${path}: ${message}`, {
    details: { issues: [{ path, message }] },
  });
}

function unknownField(field: string, spec: UploadSpec): AwakenError {
  const known = [...Object.keys(spec.fileFields), ...spec.textFields].join(", ");
  return invalidPart(field.slice(0, 100), `is not a field of this upload (send only: ${known})`);
}

/** The multipart plugin's and busboy's errors, as the wire's 4xx; ours pass through. */
function uploadError(error: unknown, spec: UploadSpec): unknown {
  if (error instanceof AwakenError) return error;
  const code = (error as { code?: unknown })?.code;
  switch (code) {
    case "FST_REQ_FILE_TOO_LARGE":
      return new AwakenError(
        "payload_too_large",
        `A file exceeds the maximum upload size of ${spec.maxFileBytes} bytes.`,
        { details: { max_bytes: spec.maxFileBytes } },
      );
    case "FST_FILES_LIMIT":
      return new AwakenError(
        "invalid_request",
        `Too many files: at most ${MULTIPART_LIMITS.files} per request.`,
      );
    case "FST_FIELDS_LIMIT":
    case "FST_PARTS_LIMIT":
      return new AwakenError(
        "invalid_request",
        `Too many form fields: at most ${MULTIPART_LIMITS.fields} besides the files.`,
      );
    case "FST_PROTO_VIOLATION":
      return new AwakenError(
        "invalid_request",
        "A form field's name names an object's prototype; rename it.",
      );
    case "FST_INVALID_MULTIPART_CONTENT_TYPE":
      return new AwakenError("invalid_request", `Send this request as ${MULTIPART}.`);
    case "FST_MP_PREMATURE_CLOSE":
      return new AwakenError("invalid_request", "The request ended before the multipart body was complete.");
  }
  // Busboy's own parse errors (a missing boundary, a truncated part) are the client's malformed body.
  if (error instanceof Error && /multipart|boundary|part|form/i.test(error.message)) {
    return new AwakenError(
      "invalid_request",
      `The multipart body is malformed: ${error.message.slice(0, 200)}`,
    );
  }
  return error;
}
