import { CONTENT_CAPTURE_PURPOSE } from "../kernel/contentCapture.js";
import { invalid } from "../kernel/errors.js";
import { type Actor, type AdminAuditEntry, auditEntry } from "./adminAudit.js";

/**
 * Data-subject consent, owned by Control: per workspace, subject and purpose, granted or not. A
 * subject with no recorded consent for a purpose has not consented.
 */

/**
 * Purposes a consent may be recorded for. Capturing content (prompts, answers, tool I/O) in telemetry;
 * the coordinator reads it at each claim of a session that asked for capture (kernel/contentCapture.ts).
 */
export const CONSENT_PURPOSES = [CONTENT_CAPTURE_PURPOSE] as const;
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
