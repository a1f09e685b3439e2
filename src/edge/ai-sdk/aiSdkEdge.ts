import type { EdgeAdapter } from "../http/edgeAdapter.js";
import { answerAiSdkError } from "./aiSdkErrors.js";
import { chatRoutes } from "./chatRoutes.js";
import { historyRoutes } from "./historyRoutes.js";

/**
 * The Vercel AI SDK v6 UI message stream: what `useChat` / `DefaultChatTransport` post and
 * resume, and the chat history rebuilt from the session's committed facts.
 */
export const aiSdkEdge: EdgeAdapter = {
  name: "ai-sdk",
  pathPrefixes: ["/v1/ai-sdk/"],
  register(app, services) {
    chatRoutes(app, services);
    historyRoutes(app, services);
  },
  answerError: answerAiSdkError,
};
