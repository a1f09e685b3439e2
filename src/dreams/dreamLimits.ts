/**
 * What one dream may read: the SDK's 1 to 100 sessions, and bounds that keep the dreamer's one
 * request well inside a model's context window. A source store past its bounds is refused when the
 * dream is created (nothing is written); transcripts are clipped, keeping each session's newest part.
 */
export const DREAM_LIMITS = {
  /** SDK: 1 to 100 session ids, no duplicates. */
  maxSessions: 100,
  /** SDK: instructions of 1 to 4,096 characters. */
  maxInstructionsChars: 4_096,
  /** SDK: a model id of 1 to 256 characters. */
  maxModelIdChars: 256,
  /** Most memories a source store may hold for a dream. */
  maxSourceMemories: 1_000,
  /** Most content (UTF-8 bytes, all memories together) a source store may hold for a dream. */
  maxSourceBytes: 400_000,
  /** Each session's transcript, newest entries first, up to this many characters. */
  transcriptCharsPerSession: 8_000,
  /** One transcript entry (a message) is clipped at this many characters. */
  transcriptEntryChars: 2_000,
} as const;
