/**
 * The live previews a session tail yields (evidence, never history): `eventId` is the id of the
 * fact the preview becomes when it commits.
 */
export type PreviewEvidence =
  | {
      kind: "preview_start";
      eventId: string;
      preview: "text" | "thinking" | "tool_input";
      toolName?: string;
    }
  | { kind: "preview_delta"; eventId: string; index: number; text: string }
  | { kind: "preview_abandoned"; eventId: string };
