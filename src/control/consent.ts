import { invalid } from "../kernel/errors.js";
import { type Actor, type AdminAuditEntry, auditEntry } from "./adminAudit.js";

/**
 * Data-subject consent, owned by Control: per workspace, subject and purpose, granted or not. A
 * subject with no recorded consent for a purpose has not consented.
 */

/** Purposes a consent may be recorded for. Capturing content (prompts, answers, tool I/O) in telemetry. */
export const CONSENT_PURPOSES = ["content_capture_telemetry"] as const;
export type ConsentPurpose = (typeof CONSENT_PURPOSES)[number];

export function isConsentPurpose(value: string): value is ConsentPurpose {
  return (CONSENT_PURPOSES as readonly string[]).includes(value);
}

export interface ConsentRecord {
  purpose: ConsentPurpose;
  granted: boolean;
  updatedAt: number;
}

export interface ConsentStore {
  set(
    workspaceId: string,
    subjectId: string,
    purpose: ConsentPurpose,
    granted: boolean,
    updatedBy: string,
    now: number,
    /** Committed with the consent, in its transaction. */
    audit: AdminAuditEntry,
  ): Promise<void>;
  list(workspaceId: string, subjectId: string): Promise<ConsentRecord[]>;
}

/**
 * Whether content may be captured: the least of what the operator allows (the ceiling), what the
 * request asked for and what the subject consented to. Any one of them absent or false: no.
 */
export function contentCaptureAllowed(decision: {
  operatorCeiling: boolean;
  requested: boolean;
  consented: boolean;
}): boolean {
  return decision.operatorCeiling && decision.requested && decision.consented;
}

export class ConsentService {
  constructor(
    private readonly store: ConsentStore,
    private readonly now: () => number,
  ) {}

  async set(
    workspaceId: string,
    subjectId: string,
    purpose: string,
    granted: boolean,
    updatedBy: string,
  ): Promise<ConsentRecord[]> {
    if (!isConsentPurpose(purpose))
      throw invalid(`purpose: unknown purpose; expected one of ${CONSENT_PURPOSES.join(", ")}`);
    const now = this.now();
    const before = (await this.store.list(workspaceId, subjectId)).find((r) => r.purpose === purpose);
    const by: Actor = { workspaceId, actor: updatedBy };
    const audit = auditEntry(by, {
      action: "consent",
      resourceType: "data_subject",
      resourceId: subjectId,
      before: before ? { purpose, granted: before.granted } : null,
      after: { purpose, granted },
      at: now,
    });
    await this.store.set(workspaceId, subjectId, purpose, granted, updatedBy, now, audit);
    return this.store.list(workspaceId, subjectId);
  }

  list(workspaceId: string, subjectId: string): Promise<ConsentRecord[]> {
    return this.store.list(workspaceId, subjectId);
  }

  /** The subject's consent to a purpose; no subject, or nothing recorded, is no consent. */
  async consented(workspaceId: string, subjectId: string | null, purpose: ConsentPurpose): Promise<boolean> {
    if (subjectId === null) return false;
    const records = await this.store.list(workspaceId, subjectId);
    return records.some((r) => r.purpose === purpose && r.granted);
  }
}
