import { readFileSync } from "node:fs";
import { z } from "zod";
import { isAcpRuntimeName } from "../kernel/acpModel.js";
import { isPackageRequirement } from "../kernel/packageRequirements.js";
import type { AcpRuntimeDefinition } from "./ports.js";

/** Where `--acp-runtimes` is read from when the flag is not given. */
export const ACP_RUNTIMES_FILE_ENV = "AWAKEN_ACP_RUNTIMES_FILE";

/** Bounds of one definition: generous for a real harness, small enough to keep a typo's cost low. */
export const ACP_RUNTIME_LIMITS = {
  runtimes: 100,
  description: 500,
  argv: 64,
  arg: 4096,
  env: 64,
  envValue: 32_768,
  fileName: 255,
} as const;

/** A variable name as the brief for harnesses has it: upper case, digits and `_`. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
/** A vault secret's name, as `environment_variable` credentials are named (schemas/vaults.ts). */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** One exact npm release (semver, no range): a harness is pinned, never floated. */
const NPM_EXACT = /^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
/** One exact pip release: the characters of a PEP 440 version, no operator, no wildcard. */
const PIP_EXACT = /^[0-9A-Za-z][0-9A-Za-z.!+_-]*$/;
/** A plain file name in the workspace: no separator, not `.` or `..`, no leading dash. */
const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

const noNul = (max: number) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .refine((value) => !value.includes("\0"), { error: "must not contain a NUL character" });

const packageSchema = z
  .strictObject({
    manager: z.enum(["npm", "pip"], { error: 'expected "npm" or "pip"' }),
    name: z.string().min(1).max(214),
    version: z.string().min(1).max(128),
  })
  .superRefine((pkg, context) => {
    const exact = pkg.manager === "npm" ? NPM_EXACT : PIP_EXACT;
    const spec = pkg.manager === "npm" ? `${pkg.name}@${pkg.version}` : `${pkg.name}==${pkg.version}`;
    if (!isPackageRequirement(pkg.manager, pkg.name) || pkg.name.includes("@", 1) || pkg.name.includes("="))
      context.addIssue({
        code: "custom",
        path: ["name"],
        message: `${JSON.stringify(pkg.name)} is not a ${pkg.manager} package name`,
      });
    else if (!exact.test(pkg.version) || !isPackageRequirement(pkg.manager, spec))
      context.addIssue({
        code: "custom",
        path: ["version"],
        message: `${JSON.stringify(pkg.version)} is not one exact ${pkg.manager} version (a range or tag is not a pin)`,
      });
  });

const envValueSchema = z.union(
  [
    noNul(ACP_RUNTIME_LIMITS.envValue),
    z.strictObject({
      vault_secret: z.string().max(256).regex(SECRET_NAME, { error: "expected a vault secret's name" }),
    }),
  ],
  { error: 'expected a string or {"vault_secret": "<secret name>"}' },
);

const definitionSchema = z.strictObject({
  name: z.string().refine(isAcpRuntimeName, {
    error: "expected lower-case letters, digits and dashes (at most 63), as in acp:<name>",
  }),
  description: noNul(ACP_RUNTIME_LIMITS.description),
  command: z
    .array(noNul(ACP_RUNTIME_LIMITS.arg))
    .min(1, { error: "must name the program that speaks ACP on stdio" })
    .max(ACP_RUNTIME_LIMITS.argv, { error: `must have at most ${ACP_RUNTIME_LIMITS.argv} elements` })
    .superRefine((argv, context) => {
      const program = argv[0] ?? "";
      if (program === "" || program.startsWith("-") || program.trim() !== program)
        context.addIssue({
          code: "custom",
          path: [0],
          message: "must be a program name or path (not empty, not an option, no surrounding blanks)",
        });
    }),
  package: packageSchema,
  env: z
    .record(
      z
        .string()
        .max(256)
        .regex(ENV_NAME, { error: "a variable name is A-Z, 0-9 and _, not starting with a digit" }),
      envValueSchema,
    )
    .superRefine((env, context) => {
      const names = Object.keys(env);
      if (names.length > ACP_RUNTIME_LIMITS.env)
        context.addIssue({
          code: "custom",
          message: `must name at most ${ACP_RUNTIME_LIMITS.env} variables`,
        });
      for (const name of names.filter((n) => n.startsWith("LD_")))
        context.addIssue({
          code: "custom",
          path: [name],
          message: "LD_* variables (the dynamic loader's) cannot be set",
        });
    }),
  memory_file: z.string().max(ACP_RUNTIME_LIMITS.fileName).regex(FILE_NAME, {
    error: "expected a plain file name in the workspace (no path separator), e.g. CLAUDE.md",
  }),
});

const fileSchema = z.strictObject({
  runtimes: z
    .array(definitionSchema)
    .max(ACP_RUNTIME_LIMITS.runtimes, { error: `must list at most ${ACP_RUNTIME_LIMITS.runtimes} runtimes` })
    .superRefine((runtimes, context) => {
      const seen = new Set<string>();
      for (const [index, runtime] of runtimes.entries()) {
        if (seen.has(runtime.name))
          context.addIssue({
            code: "custom",
            path: [index, "name"],
            message: `"${runtime.name}" is defined more than once`,
          });
        seen.add(runtime.name);
      }
    }),
});

/** `runtimes[0].env.KEY`: where in the file an issue is, as a person would write it. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path)
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`;
  return out === "" ? "(the file)" : out;
}

/**
 * The operator's ACP runtimes, from JSON text: `{"runtimes": [{name, description, command,
 * package, env, memory_file}, …]}` (strict: an unknown field is an error). `source` names the
 * file in errors, which say which field is wrong and why.
 */
export function parseAcpRuntimeFile(text: string, source: string): AcpRuntimeDefinition[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`--acp-runtimes: ${source} is not JSON`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `--acp-runtimes: ${source}: ${fieldPath(issue?.path ?? [])}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data.runtimes;
}

/** The operator's ACP runtimes from a file; one that cannot be read or parsed stops the start-up. */
export function readAcpRuntimeFile(path: string): AcpRuntimeDefinition[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(
      `--acp-runtimes: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  return parseAcpRuntimeFile(text, path);
}
