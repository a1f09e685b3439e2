import type { ConsentRecord } from "../../control/consent.js";
import type { ErasureReceipt } from "../../coordinator/dataSubjects.js";
import { isoTime } from "../../kernel/clock.js";

export function erasureDto(r: ErasureReceipt) {
  return {
    type: "data_subject_erasure",
    id: r.id,
    subject_id: r.subjectId,
    removed: r.removed,
    counts: {
      sessions: r.counts.sessions,
      facts: r.counts.facts,
      titles: r.counts.titles,
      send_receipts: r.counts.sendReceipts,
      push_notifications: r.counts.pushNotifications,
    },
    // Said by the erasure's answer only (the recorded receipt holds the database's counts).
    ...(r.workspaces
      ? {
          workspaces: {
            removed: r.workspaces.removed,
            failed: r.workspaces.failed,
            not_reached: r.workspaces.notReached,
          },
        }
      : {}),
    ...(r.vacuum ? { vacuum: r.vacuum } : {}),
    created_at: isoTime(r.createdAt),
  };
}

export function consentsDto(subjectId: string, records: ConsentRecord[]) {
  return {
    type: "data_subject_consents",
    subject_id: subjectId,
    consents: records.map((c) => ({
      purpose: c.purpose,
      granted: c.granted,
      updated_at: isoTime(c.updatedAt),
    })),
  };
}
