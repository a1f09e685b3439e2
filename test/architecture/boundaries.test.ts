import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/**
 * Which contexts each context may import (docs/architecture.md). An allow-list, so a new arrow has to be
 * argued for here. Exceptions name single files that are contracts shared across contexts.
 */
const ALLOWED: Record<string, { contexts: string[]; files?: string[] }> = {
  kernel: { contexts: [] },
  providers: { contexts: ["kernel"] },
  control: {
    contexts: ["kernel"],
    // Vault ingress seals through the SecretStore's port (and reads its typed open failure); it
    // never imports an implementation, the master key or the plaintext codec. Agent pinning
    // implements the session entry's AgentPinner contract. The ACP runtime catalog's contract:
    // publication checks an `acp:<runtime>` model against it, custody pins its harness's secrets.
    files: [
      "coordinator/ports.ts",
      "coordinator/sessionEntry.ts",
      "secrets/ports.ts",
      "secrets/errors.ts",
      "brains/ports.ts",
    ],
  },
  coordinator: {
    contexts: ["kernel"],
    // The publication contract the catalog stores, the worker transport the gateway serves, and
    // the admin audit's entry (Control owns the audit; environment authoring writes its entries).
    // The resource contract a session's claim is answered under (`resources/ports.ts`).
    // The push store keeps a config's token sealed through the sealer Control lends it, in the
    // sealed-text codec (never the master key or an implementation of the SecretStore).
    files: [
      "control/agentDefinition.ts",
      "control/adminAudit.ts",
      "worker/ports.ts",
      "resources/ports.ts",
      "secrets/ports.ts",
      "secrets/sealedText.ts",
    ],
  },
  runtime: {
    contexts: ["kernel", "providers", "coordinator"],
    // The agent definition it executes, and the sandbox contract its Hand tools run in.
    // …and the claim-scoped clients of the Resources context, narrowed by type (never its stores).
    // …and the ACP runtimes an agent's harness Brain is launched from (`brains/ports.ts`).
    files: ["control/agentDefinition.ts", "sandbox/ports.ts", "resources/ports.ts", "brains/ports.ts"],
  },
  worker: { contexts: ["kernel", "runtime", "coordinator"], files: ["resources/ports.ts"] },
  // Deployments: the Coordinator's session entry opens each trigger's session (its contract, the
  // agent pinner it resolves versions with, the records and inputs it takes and the budget rule a
  // deployment is checked by when written), the admin audit's entry its writes record, and the
  // resource request a deployment's resources become (never a service or a store of theirs).
  deployments: {
    contexts: ["kernel"],
    files: [
      "coordinator/sessionEntry.ts",
      "coordinator/ports.ts",
      "coordinator/domainInputs.ts",
      "coordinator/budgetRules.ts",
      "control/adminAudit.ts",
      "resources/ports.ts",
    ],
  },
  // …and the Deployment context's store port, which the SQL deployment store implements. Stores
  // implement the Dreams port too: a dream's output store is written with its end in one transaction.
  stores: { contexts: ["kernel", "coordinator", "control", "resources", "deployments", "dreams"] },
  // The worker transport's port and wire schemas (its calls, and the presence stream a remote
  // worker holds open), which the worker-transport edge serves.
  // The model catalog's port, which `GET /v1/models` reads (never a provider).
  // …and the Deployment context's service, records and schedule rules its routes serve.
  edge: {
    // Dreams: the Managed wire's `/v1/dreams` routes call the dream service, as they call resources'.
    contexts: ["kernel", "coordinator", "control", "resources", "deployments", "dreams"],
    files: [
      "worker/ports.ts",
      "worker/transportWire.ts",
      "worker/presenceWire.ts",
      // The build-worker transport's wire schemas, which its edge routes serve.
      "worker/buildWorkerWire.ts",
      "providers/modelCatalogPort.ts",
    ],
  },
  // Resources seals repository tokens through the SecretStore's types, like vault ingress.
  // …and keeps them in one text column with the sealed-text codec push configs use too.
  resources: { contexts: ["kernel"], files: ["secrets/ports.ts", "secrets/sealedText.ts"] },
  // Dreams orchestrate the two contexts they read and run through: a session (coordinator) and
  // memory stores (resources); neither imports Dreams. The dreamer's request/answer format is the
  // contract shared with the offline model (as outcome grading's is), and the dreamer agent is made
  // through Control's authoring types.
  dreams: {
    contexts: ["kernel", "coordinator", "resources"],
    files: ["providers/dreaming.ts", "control/agentDefinition.ts", "control/adminAudit.ts"],
  },
  // ACP Brains: the runtime catalog (shipped harnesses and the operator's file), checked with the
  // kernel's model id and package grammars.
  brains: { contexts: ["kernel"] },
  sandbox: { contexts: ["kernel"] },
  secrets: { contexts: ["kernel"] },
  console: { contexts: ["kernel"] },
  // Metrics, traces and metering: implementations of the kernel's Metrics and Tracing ports, and
  // decorators that count through them around the ports they wrap (the worker transport, the
  // session tail, the credential open audit). Only composition roots import it; every other
  // context reaches it through the kernel's ports.
  observability: {
    contexts: ["kernel"],
    files: [
      "runtime/metricLabels.ts",
      "worker/ports.ts",
      "coordinator/sessionTail.ts",
      "coordinator/workerRoster.ts",
      // The idle-slot relay the counted worker transport passes a handed-off run through.
      "coordinator/runHandOff.ts",
      "control/vaultPorts.ts",
    ],
  },
  cli: { contexts: ["*"] },
  // The package's main entry (openAwaken): a composition root like cli, without a command line.
  embedded: { contexts: ["*"] },
};

/** Files of a context that other rules forbid importing even when the context is allowed. */
const FORBIDDEN_FILES: Record<string, RegExp[]> = {
  // A worker reaches the coordinator only through its transport port, never its services or stores.
  // Both read and build history through the fact vocabulary and its codec.
  worker: [
    /^coordinator\/(?!ports\.ts|commitOperation\.ts|facts\.ts|factVocabulary\.ts|factCodec\.ts|environmentConfig\.ts)/,
  ],
  // …and the session meter's fold (list cost, running time), which the budget check and the
  // usage snapshot read from the run's history exactly as the session projection does, and the
  // outcome fold (`outcomes.ts`): where an outcome stands, read from those facts alone. Likewise
  // the workflow runs' fold and derived ids, and which agents a run's pinned agent may start (the
  // rule the coordinator checks a remote worker's spawns against).
  runtime: [
    /^coordinator\/(?!ports\.ts|commitOperation\.ts|facts\.ts|factVocabulary\.ts|factCodec\.ts|environmentConfig\.ts|sessionMeter\.ts|outcomes\.ts|workflowFold\.ts|workflowIds\.ts|spawnableAgents\.ts)/,
  ],
  // Edges call application services, never the fence or the stores behind them.
  edge: [/^coordinator\/(commitFence|sqlDispatch)/],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    // The Console's pages are .tsx: their imports obey the same arrows.
    return path.endsWith(".ts") || path.endsWith(".tsx") ? [path] : [];
  });
}

/**
 * The relative specifiers a file imports: static, dynamic and type-level (`typeof import(…)`), in
 * any quote, template literals included. A template literal with a substitution cannot be checked,
 * so it is returned as is and reported.
 */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const patterns = [
    // import … from "x", export … from "x" (over several lines)
    /^\s*(?:import|export)\b[^;]*?\bfrom\s*(["'`])((?:(?!\1).)+)\1/gms,
    // import "x" (for its effects)
    /^\s*import\s*(["'`])((?:(?!\1).)+)\1/gm,
    // import("x"), typeof import("x")
    /\bimport\s*\(\s*(["'`])((?:(?!\1).)+)\1/g,
  ];
  const specs = patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[2]!));
  return specs.filter((s) => s.startsWith(".") || s.includes("${"));
}

/** The source file an import names: `x.js` is `x.ts`, or `x.tsx` where that is the file. */
function targetOf(file: string, spec: string): string {
  const path = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
  const actual = !existsSync(path) && existsSync(`${path}x`) ? `${path}x` : path;
  return relative(SRC, actual).split(sep).join("/");
}

/**
 * Inside edge/, each protocol adapter is a folder (`edge/ai-sdk/`, `edge/managed-agents/`, …) that
 * never imports another adapter: what two adapters share lives in `edge/http/`, which imports no
 * adapter. Only the server assembly at the edge's root (`edge/httpServer.ts`) sees them all.
 */
function crossesAdapter(from: string, target: string): boolean {
  const [fromContext, fromFolder] = from.split("/");
  const [targetContext, targetFolder] = target.split("/");
  if (fromContext !== "edge" || targetContext !== "edge") return false;
  const adapterOf = (folder: string | undefined, path: string) =>
    folder && path.split("/").length > 2 && folder !== "http" ? folder : null;
  const fromAdapter = adapterOf(fromFolder, from);
  const targetAdapter = adapterOf(targetFolder, target);
  if (targetAdapter === null) return false;
  if (from.split("/").length === 2) return false; // the assembly at the edge's root
  // The OpenAPI document describes every adapter's routes from their own schemas, like the
  // assembly sees them all; no adapter imports it (that still crosses).
  if (fromAdapter === "openapi") return false;
  return fromAdapter !== targetAdapter;
}

/** `from` and `target` are paths under src/, e.g. `worker/workerLoop.ts`, `stores/sql/db.ts`. */
function crossesBoundary(from: string, target: string): boolean {
  if (crossesAdapter(from, target)) return true;
  const context = from.split("/")[0]!;
  const rule = ALLOWED[context];
  if (!rule) return true;
  const targetContext = target.split("/")[0]!;
  if (targetContext === context || rule.contexts.includes("*")) return false;
  const allowed = rule.contexts.includes(targetContext) || (rule.files ?? []).includes(target);
  const forbidden = (FORBIDDEN_FILES[context] ?? []).some((re) => re.test(target));
  return !allowed || forbidden;
}

function violations(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file).split(sep).join("/");
    const context = from.split("/")[0]!;
    if (!ALLOWED[context]) {
      found.push(
        `${from}: folder "${context}" is not a known context; add it to docs/architecture.md and this test`,
      );
      continue;
    }
    for (const spec of importsOf(file)) {
      if (spec.includes("${")) {
        found.push(
          `${from} imports a computed path (${spec}); name the module literally so it can be checked`,
        );
        continue;
      }
      const target = targetOf(file, spec);
      if (crossesBoundary(from, target)) found.push(`${from} imports ${target}`);
    }
  }
  return found;
}

describe("context boundaries", () => {
  it("no import crosses a forbidden boundary", () => {
    expect(violations()).toEqual([]);
  });

  it("the checker reports the forbidden arrows", () => {
    expect(crossesBoundary("worker/workerLoop.ts", "stores/sql/db.ts")).toBe(true);
    expect(crossesBoundary("worker/workerLoop.ts", "coordinator/sessionService.ts")).toBe(true);
    expect(crossesBoundary("runtime/turnRunner.ts", "edge/httpServer.ts")).toBe(true);
    expect(crossesBoundary("runtime/turnRunner.ts", "stores/sql/db.ts")).toBe(true);
    expect(crossesBoundary("edge/httpServer.ts", "stores/sql/db.ts")).toBe(true);
    expect(crossesBoundary("coordinator/sessionService.ts", "control/agentService.ts")).toBe(true);
    expect(crossesBoundary("providers/router.ts", "coordinator/ports.ts")).toBe(true);
    expect(crossesBoundary("edge/managed-agents/modelDto.ts", "providers/modelCatalogPort.ts")).toBe(false);
    expect(crossesBoundary("edge/managed-agents/modelDto.ts", "providers/modelCatalog.ts")).toBe(true);
    expect(crossesBoundary("runtime/turnRunner.ts", "edge/http/webhookTargets.ts")).toBe(true);
    expect(crossesBoundary("control/credentialService.ts", "secrets/localSecretStore.ts")).toBe(true);
    expect(crossesBoundary("edge/httpServer.ts", "secrets/ports.ts")).toBe(true);
    // Sealing contexts see the sealer's port and codec, never the key or the store behind them.
    expect(crossesBoundary("coordinator/sealedPushStore.ts", "secrets/sealedText.ts")).toBe(false);
    expect(crossesBoundary("coordinator/sealedPushStore.ts", "secrets/masterKey.ts")).toBe(true);
    expect(crossesBoundary("coordinator/sealedPushStore.ts", "secrets/scopedSealers.ts")).toBe(true);
    expect(crossesBoundary("secrets/masterKeyAgreement.ts", "stores/sql/sqlInstallationFacts.ts")).toBe(true);
    expect(crossesBoundary("control/linkedIamCache.ts", "edge/http/edgeServices.ts")).toBe(true);
    expect(crossesBoundary("worker/workerLoop.ts", "runtime/turnRunner.ts")).toBe(false);
    // Edge adapters: none imports another or the stores/runtime; shared plumbing imports no adapter.
    expect(crossesBoundary("edge/ai-sdk/chatRoute.ts", "edge/managed-agents/dto.ts")).toBe(true);
    expect(crossesBoundary("edge/ag-ui/runRoute.ts", "edge/ai-sdk/chatStream.ts")).toBe(true);
    expect(crossesBoundary("edge/http/clientErrors.ts", "edge/managed-agents/errorEnvelope.ts")).toBe(true);
    expect(crossesBoundary("edge/ai-sdk/chatRoute.ts", "runtime/turnRunner.ts")).toBe(true);
    expect(crossesBoundary("edge/ag-ui/runRoute.ts", "stores/sql/db.ts")).toBe(true);
    expect(crossesBoundary("edge/ai-sdk/chatRoute.ts", "edge/http/auth.ts")).toBe(false);
    expect(crossesBoundary("edge/managed-agents/routes/eventRoutes.ts", "edge/managed-agents/dto.ts")).toBe(
      false,
    );
    expect(crossesBoundary("edge/httpServer.ts", "edge/ai-sdk/aiSdkEdge.ts")).toBe(false);
    expect(
      crossesBoundary("edge/openapi/managedOperations.ts", "edge/managed-agents/schemas/agents.ts"),
    ).toBe(false);
    expect(
      crossesBoundary("edge/managed-agents/routes/agentRoutes.ts", "edge/openapi/openApiDocument.ts"),
    ).toBe(true);
    // Observability: composition roots import it, contexts only its ports in the kernel.
    expect(crossesBoundary("runtime/modelStep.ts", "observability/prometheusMetrics.ts")).toBe(true);
    expect(crossesBoundary("edge/httpServer.ts", "observability/openTelemetry.ts")).toBe(true);
    expect(crossesBoundary("coordinator/sessionService.ts", "observability/countedTail.ts")).toBe(true);
    expect(crossesBoundary("runtime/modelStep.ts", "kernel/metrics.ts")).toBe(false);
    expect(crossesBoundary("cli/allInOne.ts", "observability/prometheusMetrics.ts")).toBe(false);
    expect(crossesBoundary("embedded/openAwaken.ts", "observability/prometheusMetrics.ts")).toBe(false);
    expect(crossesBoundary("observability/countedTail.ts", "coordinator/sessionTail.ts")).toBe(false);
    expect(crossesBoundary("observability/scrapedGauges.ts", "stores/sql/sqlRunQueueStats.ts")).toBe(true);
    expect(crossesBoundary("observability/meteredGateway.ts", "coordinator/sessionService.ts")).toBe(true);
    expect(crossesBoundary("observability/prometheusMetrics.ts", "cli/storage.ts")).toBe(true);
    expect(crossesBoundary("observability/prometheusMetrics.ts", "edge/http/metricsRoute.ts")).toBe(true);
    // Guard against an import regex that silently matches nothing.
    expect(importsOf(join(SRC, "worker/workerLoop.ts")).some((s) => s.includes("runtime/"))).toBe(true);
  });

  it("reads .tsx files and every form of import, template literals included", () => {
    // The Console's pages are checked, and resolve to their .tsx sources.
    expect(sourceFiles(SRC).some((f) => f.endsWith(join("console", "App.tsx")))).toBe(true);
    expect(targetOf(join(SRC, "console/main.tsx"), "./App.js")).toBe("console/App.tsx");
    expect(crossesBoundary("console/App.tsx", "stores/sql/db.ts")).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "awaken-boundaries-"));
    try {
      const file = join(dir, "page.tsx");
      writeFileSync(
        file,
        [
          'import { a } from "../stores/a.js";',
          "import {",
          "  b,",
          '} from "../stores/b.js";',
          'export { c } from "../stores/c.js";',
          'import "../stores/d.js";',
          "const e = await import(`../stores/e.js`);",
          'type F = typeof import("../stores/f.js");',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a computed import
          "const g = await import(`../stores/${name}.js`);",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: prose that mentions `from`, not an import
          'const text = `moved from ${"x"} to y`; // prose, not an import',
        ].join("\n"),
      );
      expect(importsOf(file)).toEqual(
        expect.arrayContaining([
          "../stores/a.js",
          "../stores/b.js",
          "../stores/c.js",
          "../stores/d.js",
          "../stores/e.js",
          "../stores/f.js",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the computed path, as written
          "../stores/${name}.js",
        ]),
      );
      expect(importsOf(file)).toHaveLength(7);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
