import type { ExecutableAgentRegistrar, ExecutableAgentSnapshot } from "../coordinator/ports.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError } from "../kernel/errors.js";
import type { PublicationStore, StoredPublication } from "./ports.js";

/** Where registration reports; pino's loggers fit. Never handed a definition (it may hold secrets). */
export interface RegistrationLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export const silentRegistrationLog: RegistrationLog = { info() {}, warn() {}, error() {} };

/**
 * What one attempt came to. `unavailable`: the Coordinator may accept it later (unreachable, or a
 * retryable error); `refused`: a conflicting fingerprint, final; `failed`: any other deterministic
 * error, left pending so an operator sees it logged on every pass.
 */
export type RegistrationOutcome =
  | { kind: "registered" }
  | { kind: "unavailable"; error: unknown }
  | { kind: "refused"; error: AwakenError }
  | { kind: "failed"; error: AwakenError };

export function snapshotOf(p: StoredPublication): ExecutableAgentSnapshot {
  return {
    workspaceId: p.workspaceId,
    agentId: p.agentId,
    version: p.version,
    fingerprint: p.fingerprint,
    definition: p.definition,
    publishedAt: p.createdAt,
  };
}

/** Fields naming a publication and an error in a log line: ids and codes, never the definition. */
export function logFields(p: StoredPublication, error?: unknown): object {
  const base = { workspaceId: p.workspaceId, agentId: p.agentId, version: p.version };
  if (error === undefined) return base;
  return error instanceof AwakenError
    ? { ...base, code: error.code, reason: error.message }
    : { ...base, reason: error instanceof Error ? error.message : String(error) };
}

/**
 * Registers one publication and records the outcome on its row. A failure to record is only
 * logged: the row stays unregistered and the reconciler re-registers it, which is idempotent.
 */
export async function registerPublication(
  store: PublicationStore,
  registrar: ExecutableAgentRegistrar,
  clock: Clock,
  log: RegistrationLog,
  p: StoredPublication,
): Promise<RegistrationOutcome> {
  let outcome: RegistrationOutcome;
  try {
    await registrar.register(snapshotOf(p));
    outcome = { kind: "registered" };
  } catch (error) {
    outcome = classify(error);
  }
  try {
    if (outcome.kind === "registered") {
      await store.markRegistered(p.workspaceId, p.agentId, p.version, clock.now());
    } else if (outcome.kind === "refused") {
      await store.markRegistrationRefused(p.workspaceId, p.agentId, p.version, outcome.error.message);
    }
  } catch (error) {
    log.warn(logFields(p, error), "could not record the publication's registration; it will be retried");
  }
  return outcome;
}

function classify(error: unknown): RegistrationOutcome {
  if (!(error instanceof AwakenError) || error.retryable) return { kind: "unavailable", error };
  if (error.code === "publication_conflict") return { kind: "refused", error };
  return { kind: "failed", error };
}
