/**
 * The Managed family of `@anthropic-ai/sdk` as its own declarations say it is: every resource method
 * that sends a request, found by walking the client's type with the TypeScript checker, with the
 * type its answer (or each item of its page or stream) is declared to have. Nothing here is a list
 * kept by hand, so an operation or a field the SDK adds shows up in the census as a failure.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The Managed family: these resources of `client.beta`, and of the client itself (the GA lines). */
export const MANAGED_BETA = [
  "agents",
  "environments",
  "sessions",
  "deployments",
  "deploymentRuns",
  "vaults",
  "memoryStores",
  "files",
  "skills",
  "userProfiles",
  "dreams",
  "tunnels",
  "models",
] as const;
export const MANAGED_GA = ["models", "files", "skills", "userProfiles"] as const;
/**
 * Beyond the family, served because Managed work needs them: the webhook endpoints its events are
 * delivered to (`client.beta.organization.webhooks`).
 */
export const BEYOND_FAMILY = ["beta.organization.webhooks"] as const;

/** How an operation answers: one value, a page of items, a stream of events, or raw bytes. */
export type AnswerKind = "value" | "page" | "stream" | "bytes";

export interface SdkOperation {
  /** The method's path on the client, e.g. `beta.sessions.events.list`. */
  path: string;
  kind: AnswerKind;
  /** The declared type of the answer (`value`) or of each item (`page`, `stream`); null for bytes. */
  type: ts.Type | null;
  /** The declared type as the SDK names it, for messages. */
  typeName: string;
}

export interface SdkSurface {
  checker: ts.TypeChecker;
  operations: SdkOperation[];
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Builds the checker over the installed SDK once (about two seconds) and walks the client's type. */
export function loadSdkSurface(): SdkSurface {
  // The probe file must live under the repository so `@anthropic-ai/sdk` resolves from its node_modules.
  const dir = mkdtempSync(join(ROOT, "test/census/.probe-"));
  try {
    const probe = join(dir, "probe.ts");
    writeFileSync(
      probe,
      'import type Anthropic from "@anthropic-ai/sdk";\nexport declare const client: Anthropic;\n',
    );
    const program = ts.createProgram([probe], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(probe);
    const statement = source?.statements[1];
    if (!statement || !ts.isVariableStatement(statement)) throw new Error("the SDK probe did not parse");
    const declaration = statement.declarationList.declarations[0];
    if (!declaration) throw new Error("the SDK probe declares no client");
    const client = checker.getTypeAtLocation(declaration.name);
    if (client.flags & ts.TypeFlags.Any)
      throw new Error("@anthropic-ai/sdk did not resolve from the repository");

    const operations: SdkOperation[] = [];
    const beta = propertyType(checker, client, "beta");
    for (const name of MANAGED_BETA)
      walkResource(checker, propertyType(checker, beta, name), `beta.${name}`, operations);
    for (const name of MANAGED_GA)
      walkResource(checker, propertyType(checker, client, name), name, operations);
    for (const path of BEYOND_FAMILY) {
      const resource = path.split(".").reduce((type, name) => propertyType(checker, type, name), client);
      walkResource(checker, resource, path, operations);
    }
    return { checker, operations };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function propertyType(checker: ts.TypeChecker, type: ts.Type, name: string): ts.Type {
  const symbol = type.getProperty(name);
  if (!symbol) throw new Error(`the SDK's client has no ${name}`);
  return checker.getTypeOfSymbol(symbol);
}

/** A resource's request methods, and its sub-resources' (anything holding the client is a resource). */
function walkResource(checker: ts.TypeChecker, resource: ts.Type, path: string, out: SdkOperation[]): void {
  for (const member of checker.getPropertiesOfType(resource)) {
    if (member.name.startsWith("_")) continue;
    const memberType = checker.getTypeOfSymbol(member);
    const signature = memberType.getCallSignatures()[0];
    if (signature) {
      const operation = operationOf(checker, `${path}.${member.name}`, signature.getReturnType());
      if (operation) out.push(operation);
    } else if (memberType.getProperty("_client")) {
      walkResource(checker, memberType, `${path}.${member.name}`, out);
    }
  }
}

/** `APIPromise<T>`, `PagePromise<Page, Item>`, `APIPromise<Stream<E>>` or `APIPromise<Response>`; else no request. */
function operationOf(checker: ts.TypeChecker, path: string, returned: ts.Type): SdkOperation | null {
  const promise = returned.getSymbol()?.getName();
  const args = checker.getTypeArguments(returned as ts.TypeReference);
  if (promise === "PagePromise") {
    const item = args[1];
    if (!item) throw new Error(`${path}: a page without an item type`);
    return { path, kind: "page", type: item, typeName: checker.typeToString(item) };
  }
  if (promise !== "APIPromise") return null;
  const answer = args[0];
  if (!answer) throw new Error(`${path}: a promise without an answer type`);
  const answerName = answer.getSymbol()?.getName();
  if (answerName === "Response") return { path, kind: "bytes", type: null, typeName: "Response" };
  if (answerName === "Stream") {
    const event = checker.getTypeArguments(answer as ts.TypeReference)[0];
    if (!event) throw new Error(`${path}: a stream without an event type`);
    return { path, kind: "stream", type: event, typeName: checker.typeToString(event) };
  }
  return { path, kind: "value", type: answer, typeName: checker.typeToString(answer) };
}
