/**
 * The AI SDK client majors the AI SDK edge is judged by: `ai` 6 and `ai` 7 (installed side by side,
 * the 7 line under the npm alias `ai-v7`). Tests run once per entry; the 7 module is typed as the 6
 * one, whose chat, transport and stream helpers it keeps (the UI message stream of 7 is a superset).
 */
import * as ai6 from "ai";
import * as ai7 from "ai-v7";

export type AiSdkModule = typeof ai6;

export interface AiSdkClient {
  /** How test names say which client ran: `ai@6`, `ai@7`. */
  label: string;
  major: 6 | 7;
  ai: AiSdkModule;
}

export const AI_SDK_CLIENTS: readonly AiSdkClient[] = [
  { label: "ai@6", major: 6, ai: ai6 },
  { label: "ai@7", major: 7, ai: ai7 as unknown as AiSdkModule },
];
