/**
 * A minimal chat on the official `useChat` hook, talking to Awaken's AI SDK edge on the page's own
 * origin. Approvals go back with `addToolApprovalResponse`; the hook re-posts on its own once every
 * pending approval is answered. The data-testid attributes are what the browser test reads.
 */
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { type FormEvent, useMemo, useState } from "react";
import { ToolPart } from "./ToolPart.js";

export interface AppProps {
  apiKey: string;
  agentId: string;
  /** Absent: the server picks the workspace's default environment. */
  environmentId?: string | undefined;
}

export function App({ apiKey, agentId, environmentId }: AppProps) {
  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: "/v1/ai-sdk/chat",
        headers: { "x-api-key": apiKey },
        body: { agentId, ...(environmentId ? { environmentId } : {}) },
      }),
    [apiKey, agentId, environmentId],
  );
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [draft, setDraft] = useState("");

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = draft.trim();
    if (text === "") return;
    setDraft("");
    void sendMessage({ text });
  }

  return (
    <main>
      <h1>Awaken chat</h1>
      <p data-testid="status">Status: {status}</p>
      <ol aria-label="Messages" data-testid="messages">
        {messages.map((message) => (
          <li
            key={message.id}
            data-testid="message"
            data-role={message.role}
            data-message-id={message.id}
            aria-label={`${message.role} message`}
          >
            <strong>{message.role}</strong>
            {message.parts.map((part, index) => {
              // Parts only ever append within a message, so their position is a stable key.
              const key = `${message.id}:${index}`;
              if (part.type === "text") {
                return (
                  <p key={key} data-testid="text-part">
                    {part.text}
                  </p>
                );
              }
              if (isToolUIPart(part)) {
                return (
                  <ToolPart
                    key={key}
                    part={part}
                    onAnswer={(approved) => {
                      if (part.approval) void addToolApprovalResponse({ id: part.approval.id, approved });
                    }}
                  />
                );
              }
              return null;
            })}
          </li>
        ))}
      </ol>
      {error ? (
        <p role="alert" data-testid="error">
          Error: {error.message}
        </p>
      ) : null}
      <form onSubmit={submit} aria-label="Send a message">
        <label htmlFor="prompt">Message</label>
        <input
          id="prompt"
          data-testid="prompt"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          disabled={status !== "ready" && status !== "error"}
        />
        <button type="submit" data-testid="send" disabled={status !== "ready" && status !== "error"}>
          Send
        </button>
      </form>
    </main>
  );
}
