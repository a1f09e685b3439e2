/** The arguments of an agent tool, checked: what the tool's input schema promises. */
export interface AgentCallInput {
  message: string;
  sessionId?: string;
}

/** Input a tool refuses; the call answers it as a tool error the model can correct. */
export class CallRefusal extends Error {
  override readonly name = "CallRefusal";
}

const KNOWN = new Set(["message", "session_id"]);

export function parseCallInput(args: unknown): AgentCallInput {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new CallRefusal('The arguments must be an object: {"message": "…", "session_id"?: "…"}.');
  }
  const record = args as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !KNOWN.has(key));
  if (unknown.length > 0) {
    throw new CallRefusal(
      `Unknown argument ${unknown.map((k) => JSON.stringify(k)).join(", ")}; this tool takes "message" and "session_id".`,
    );
  }
  const { message, session_id: sessionId } = record;
  if (typeof message !== "string" || message.trim() === "") {
    throw new CallRefusal('"message" is required: a non-empty string, the user message of this turn.');
  }
  if (sessionId === undefined || sessionId === null) return { message };
  if (typeof sessionId !== "string" || sessionId.trim() === "") {
    throw new CallRefusal(
      '"session_id" must be a non-empty string: the session_id an earlier call returned.',
    );
  }
  return { message, sessionId };
}
